"""Views: diff renderings, debug overlays, notebook helpers and the HTML report. They render
what the metrics computed and never compute a score."""
