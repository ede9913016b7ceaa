"""A session's progress listeners: the latest asked first, a claimed event goes no further, removal stops it."""

from __future__ import annotations

from toolgate.core.tool_session import ProgressEvent, ProgressListeners


def event(tool_use_id: str) -> ProgressEvent:
    return ProgressEvent("s", tool_use_id, "output", "x")


def test_the_latest_listener_may_take_an_event_for_itself() -> None:
    general: list[str] = []
    own: list[str] = []
    listeners = ProgressListeners([lambda e: general.append(e.tool_use_id)])

    def chat(e: ProgressEvent) -> bool:
        if e.tool_use_id != "mine":
            return False
        own.append(e.tool_use_id)
        return True

    stop = listeners.add(chat)
    listeners.emit(event("mine"))
    listeners.emit(event("other"))
    assert (own, general) == (["mine"], ["other"])  # never reported twice

    stop()
    stop()  # stopping twice is harmless
    listeners.emit(event("mine"))
    assert (own, general) == (["mine"], ["other", "mine"])
