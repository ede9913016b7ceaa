"""Keyed dependencies, created on first use and cached per session or per call, and overridable.

Tools never construct their collaborators (the clock, the ripgrep binary, the home directory, the output
store): they ask the context for them. Tests and the sidecar replace any of them with `override`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar, cast

T = TypeVar("T")

Scope = Literal["session", "call"]


class Resolver(Protocol):
    def get(self, dep: Dep[T]) -> T: ...


@dataclass(frozen=True, eq=False)
class Dep(Generic[T]):
    """A key for one dependency. Identity is the key: two Deps with the same name are different keys.

    `close` runs when the owning session closes (session scope) or the call ends (call scope).
    """

    name: str
    factory: Callable[[Resolver], T]
    scope: Scope = "session"
    close: Callable[[T], Awaitable[None] | None] | None = field(default=None)

    def __repr__(self) -> str:
        return f"Dep({self.name!r}, scope={self.scope})"


class _Cache:
    def __init__(self) -> None:
        self.values: dict[Dep[Any], Any] = {}
        self.order: list[Dep[Any]] = []

    async def close(self) -> None:
        # Close in reverse creation order: later dependencies may use earlier ones.
        for dep in reversed(self.order):
            if dep.close is not None:
                result = dep.close(self.values[dep])
                if inspect.isawaitable(result):
                    await result
        self.values.clear()
        self.order.clear()


class Dependencies:
    """The session-level store: session-scoped cache and the overrides."""

    def __init__(self) -> None:
        self._overrides: dict[Dep[Any], Callable[[Resolver], Any]] = {}
        self._session = _Cache()

    def override(self, dep: Dep[T], value: T) -> None:
        """Use `value` for `dep` from now on (drops a value already created for it)."""
        self.override_factory(dep, lambda _r: value)

    def override_factory(self, dep: Dep[T], factory: Callable[[Resolver], T]) -> None:
        self._overrides[dep] = factory
        if dep in self._session.values:
            del self._session.values[dep]
            self._session.order.remove(dep)

    def for_call(self) -> CallDependencies:
        return CallDependencies(self)

    def get(self, dep: Dep[T]) -> T:
        """Resolve outside any call (session-scoped dependencies only)."""
        if dep.scope == "call":
            raise LookupError(f"{dep!r} is call-scoped; resolve it through a call's dependencies")
        return self._resolve(dep, self)

    def _resolve(self, dep: Dep[T], resolver: Resolver) -> T:
        cache = self._session
        if dep not in cache.values:
            factory = self._overrides.get(dep, dep.factory)
            cache.values[dep] = factory(resolver)
            cache.order.append(dep)
        return cast(T, cache.values[dep])

    def _factory(self, dep: Dep[T]) -> Callable[[Resolver], T]:
        return cast(Callable[[Resolver], T], self._overrides.get(dep, dep.factory))

    async def aclose(self) -> None:
        await self._session.close()


class CallDependencies:
    """One call's view: call-scoped values live as long as the call; session ones come from the session."""

    def __init__(self, session: Dependencies) -> None:
        self._session = session
        self._call = _Cache()

    def get(self, dep: Dep[T]) -> T:
        if dep.scope == "session":
            return self._session._resolve(dep, self)
        if dep not in self._call.values:
            self._call.values[dep] = self._session._factory(dep)(self)
            self._call.order.append(dep)
        return cast(T, self._call.values[dep])

    @property
    def holds_closable(self) -> bool:
        """Whether a value created for this call has a `close` to run (most calls create none)."""
        return any(dep.close is not None for dep in self._call.order)

    async def aclose(self) -> None:
        await self._call.close()
