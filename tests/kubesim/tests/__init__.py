"""kubesim's own tests: the real kubectl and the official Python client against it."""
