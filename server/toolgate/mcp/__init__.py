"""MCP both ways: other servers' tools behind toolgate's gate (client), toolgate's tools over MCP (server).

The official `mcp` SDK speaks the protocol; this package decides what may start, what the model sees, and how
a server's answers become tool results.
"""
