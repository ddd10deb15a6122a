"""GPU tests of the generated headers (marker ``gpu``; run through the device tool)."""
