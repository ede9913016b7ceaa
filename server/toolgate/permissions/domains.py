"""What the WebFetch rules of a rule book say about one host (the engine's `FetchGuard` answer)."""

from __future__ import annotations

from toolgate.core.permission import DomainVerdict
from toolgate.permissions.network import names_exactly
from toolgate.permissions.rules import WEB_FETCH, domain_matches
from toolgate.permissions.sources import RuleBook


def domain_verdict(book: RuleBook, host: str) -> DomainVerdict:
    """Deny rules first, then ask, then allow, as the ladder orders them; a tool-wide `WebFetch` rule covers
    every host but names none exactly."""
    named = next(
        (
            e.rule.text
            for e in book.of("allow")
            if e.rule.tool == WEB_FETCH and e.rule.kind == "domain" and names_exactly(e.rule.specifier, host)
        ),
        None,
    )
    for behavior in ("deny", "ask", "allow"):
        for entry in book.of(behavior):
            rule = entry.rule
            if rule.tool != WEB_FETCH:
                continue
            if rule.kind == "tool" or (rule.kind == "domain" and domain_matches(rule, host)):
                return DomainVerdict(behavior, rule.text, named)
    return DomainVerdict(None, None, named)
