"""End-to-end tests of rollout-verify: the real CLI against kubesim, the image, the examples."""
