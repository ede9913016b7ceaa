"""The agent: one chat with a model over a tool runtime.

    loop.py          AgentChat — send(text) streams the reply, runs its tool calls, repeats until done
    stored_chat.py   open_chat / attach_chat — an AgentChat over a stored session (new or resumed, repaired)
    transcript.py    the conversation on disk (transcript.jsonl)
    conversation.py, events.py, context_relief.py, retry.py, system_prompt.py, providers/

agent/ knows no transport: the sidecar (sidecar/chat.py) and the CLI (cli/chat.py) drive it.
"""
