"""Pure text algorithms: no I/O, nothing of toolgate's own imported. Easy to test, easy to trust."""
