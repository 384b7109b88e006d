"""The JSON index: every Archive's items, sharded by a stable hash of the IBI key."""
