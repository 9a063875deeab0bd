"""The Iceberg spec model: pure, immutable, no file I/O."""
