"""The format layer: the canonical graph (load, validate, save), its JSON schema, image loading,
conversion from SciFlow-Bench and hashing. Imports nothing else of sciflow."""
