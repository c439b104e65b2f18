"""The apiserver's storage: objects with resourceVersions and watch history, the served
resource table, Status errors, and label/field selection."""
