"""Why checks fail and why rollouts are stuck, in words that say what to do. Pure."""
