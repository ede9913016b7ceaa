"""The tool runtime: the tool contract, the runner, batching, readFileState and dependency injection.

core/ knows no particular tool and no transport.
"""
