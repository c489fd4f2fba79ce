"""Model loaders beside the shipped weights: label embeddings and their on-disk store, CLIP and
LPIPS, the judge client, device resolution and weight downloads."""
