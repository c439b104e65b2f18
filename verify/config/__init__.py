"""argv and VERIFY_* variables -> a validated Job; every input problem is a ConfigError here."""
