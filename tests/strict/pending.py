"""Op-table rows (name-dtype) not yet device-neutral: each is an xfail that must still fail on the device
(tests/strict/test_strict_ops.py); remove a row here when its ops stop making host arrays."""
PENDING = set()
