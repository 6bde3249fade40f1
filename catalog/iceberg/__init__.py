"""Iceberg REST catalog over the shim: views published as Iceberg tables (metadata, manifests, name mapping)."""
