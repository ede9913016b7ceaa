"""Checkpoints and rewind: a shadow git store outside the workspace and outside the user's `.git`.

`store.CheckpointStore` takes checkpoints (one commit per checkpoint, one ref per checkpoint, one index per
session) and `restore` puts a checkpoint's files back. The package knows no tool: the runtime decides when to
ask for a checkpoint.
"""
