"""icefloe's interoperability tests and their harness (the reference engines)."""
