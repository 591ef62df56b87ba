"""A proposal and its review as Rich renderables: one renderer for ``memtui proposals show`` and the TUI.

Every part a reviewer decides on is here, in the order they read it: what the proposal
is and where it stands, the source tags it changes (a promotion first: an agent's idea
turned into the user's decision), its rationale and evidence, the checks on its result,
the diff of every page, and for a stale proposal what changed on disk since its base.
``colours`` maps theme colour names (and the source tags) to colours: the TUI passes its
theme's, the CLI ``CLI_COLOURS``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from memtui.field.checks import Finding
from memtui.render.diff import side_by_side, unified
from memtui.render.glyphs import PROPOSAL_STATES, SEVERITY, Glyph
from memtui.textsafety import one_line, plural, visible

Colours = Mapping[str, str]

# The theme's colour names as terminal styles, for the CLI (no theme there).
CLI_COLOURS: dict[str, str] = {
    "primary": "cyan",
    "secondary": "dim",
    "accent": "cyan",
    "success": "green",
    "warning": "yellow",
    "error": "red",
    "stated": "green",
    "observed": "cyan",
    "inferred": "yellow",
    "suggested": "magenta",
}


def age_text(days: float | None) -> str:
    """A proposal's age: ``5 h``, ``12 d``, ``age ?``."""
    if days is None:
        return "age ?"
    if days < 1:
        return f"{days * 24:.0f} h"
    return f"{days:.0f} d"


def entry_prompt(entry: Any, colours: Colours) -> Text:
    """A proposal in a list: its states, id, job, age, pages and carrier (and, decided, who and why)."""
    proposal = entry.proposal
    text = Text()
    decided = entry.decision is not None and not entry.pending
    for flag in entry.flags or [entry.state]:
        glyph = PROPOSAL_STATES.get(flag, Glyph("?", flag, "secondary"))
        word = glyph.word.upper() if decided else glyph.word
        text.append(f"{glyph.glyph} {word} ", style=f"bold {colours.get(glyph.colour, '')}")
    text.append(one_line(proposal.id, 60), style="strike" if decided else "bold")
    text.append(
        f"\n  {one_line(proposal.job, 20)} · {age_text(entry.age_days)} · "
        f"{plural(len(proposal.pages), 'page')} · {proposal.carrier}",
        style="dim",
    )
    if decided:
        decision = entry.decision
        text.append(f"\n  by {one_line(decision.who, 30)} · {one_line(decision.ts)}", style="dim")
        if decision.reason:
            text.append(f"\n  why: {one_line(decision.reason, 80)}")
    if entry.conflicts_with:
        text.append(
            f"\n  conflicts with {one_line(', '.join(entry.conflicts_with), 80)}", style=colours.get("warning", "")
        )
    return text


def findings_text(title: str, findings: Sequence[Finding], colours: Colours, colour: str, *, limit: int = 30) -> Text:
    """``title: N`` and the first ``limit`` findings, one a line, each with its severity glyph."""
    text = Text(f"{title}: {len(findings)}\n", style=f"bold {colours.get(colour, '')}")
    for finding in findings[:limit]:
        glyph = SEVERITY.get(finding.severity, SEVERITY["info"])
        text.append(
            f"  {glyph.glyph} {finding.severity} {finding.rule} ", style=f"bold {colours.get(glyph.colour, '')}"
        )
        text.append(f"{one_line(finding.path)}{':' + str(finding.line) if finding.line else ''}  ", style="dim")
        text.append(f"{one_line(finding.message, 120)}\n")
    if len(findings) > limit:
        text.append(f"  … {len(findings) - limit} more\n", style="dim")
    return text


def tagged(text: str, colours: Colours, base: str = "") -> Text:
    """A display-safe line with its source tags in their colours."""
    from memtui.review.diffs import source_tag_spans

    out = Text(visible(text), style=base)
    for start, end, tag in source_tag_spans(out.plain):
        out.stylize(f"bold {colours.get(tag, '')}", start, end)
    return out


def tag_changes_text(review: Any, colours: Colours) -> Text | None:
    """The source tags the proposal changes, promotions marked; None when it changes none."""
    if not review.tag_changes:
        return None
    text = Text("Source tags it changes\n", style=f"bold {colours.get('primary', '')}")
    for change in review.tag_changes:
        if change.promotion:
            text.append("  \u2691 promoted ", style=f"bold reverse {colours.get('warning', '')}")
        else:
            text.append("  tag changed ", style=colours.get("warning", ""))
        text.append_text(tagged(f"[{change.before}] \u2192 [{change.after}] ", colours))
        text.append(one_line(f"{change.path}:{change.line}"))
        if change.from_path and change.from_path != change.path:
            text.append(one_line(f" (was [{change.before}] in {change.from_path}:{change.old_line})"), style="dim")
        text.append("  ")
        text.append(one_line(change.text, 100), style="dim")
        text.append("\n")
    return text


def review_parts(
    review: Any,
    colours: Colours,
    *,
    side: bool = False,
    three_way: bool = False,
    hint: str = "",
    expand: bool = True,
) -> list[RenderableType]:
    """Everything a reviewer reads about one proposal, top to bottom.

    ``side``: diffs side by side; ``three_way``: for a stale proposal, every three-way
    diff in full (the CLI prints them; the TUI shows them in a dialog before approving);
    ``hint``: a line after the diff heading (the TUI's keys)."""
    entry = review.entry
    proposal = review.proposal
    primary = f"bold {colours.get('primary', '')}"
    head = entry_prompt(entry, colours)
    head.append(f"\ncreated {one_line(proposal.created or '?')} · {one_line(proposal.location)}", style="dim")
    if entry.decision is not None:
        decision = entry.decision
        head.append(
            f"\n{one_line(entry.state).upper()} by {one_line(decision.who)} on {one_line(decision.ts)}", style="bold"
        )
        head.append(f"\nwhy: {one_line(decision.reason or '(no reason given)', 200)}")
    parts: list[RenderableType] = [head]
    tags = tag_changes_text(review, colours)
    if tags is not None:
        parts.append(Text("\n") + tags)
    body = Text("\nRationale\n", style=primary)
    body.append_text(tagged(proposal.rationale.strip() or "(none given)", colours))
    body.append("\n\nEvidence\n", style=primary)
    body.append("\n".join(f"• {one_line(e, 200)}" for e in proposal.evidence) or "(none given)")
    for problem in dict.fromkeys([*proposal.problems, *entry.validation.errors]):
        body.append(f"\n{SEVERITY['error'].glyph} {one_line(problem, 200)}", style=colours.get("error", ""))
    for warning in dict.fromkeys([*proposal.warnings, *entry.validation.warnings]):
        body.append(f"\n{SEVERITY['warning'].glyph} {one_line(warning, 200)}", style=colours.get("warning", ""))
    parts.append(body)
    validation = entry.validation
    if validation.new_findings is not None:
        checks = Text("\n\nChecks on the result (as it would be after applying)\n", style=primary)
        colour = "error" if not validation.ok else "warning"
        checks.append_text(findings_text("new findings", validation.new_findings, colours, colour))
        checks.append_text(findings_text("resolved findings", validation.resolved_findings or [], colours, "success"))
        parts.append(checks)
    layout = "side by side" if side else "unified"
    heading = Text(f"\nChanges (disk now \u2192 proposed; {layout})", style=primary)
    if hint:
        heading.append(f"  {hint}", style="dim")
    parts.append(heading)
    for diff in review.diffs:
        parts.append(diff_view(diff, colours, side=side, promoted=review.promoted_lines(diff.path), expand=expand))
    if review.three_way:
        warning = colours.get("warning", "")
        parts.append(
            Text(
                f"\n\u25d0 stale: {plural(len(review.three_way), 'page')} changed on disk since the job's base; "
                + ("what changed, below" if three_way else "approving shows the three-way difference first"),
                style=f"bold {warning}",
            )
        )
        if three_way:
            parts.extend(three_way_parts(review, colours, side=side, expand=expand))
    return parts


def three_way_parts(review: Any, colours: Colours, *, side: bool = False, expand: bool = True) -> list[RenderableType]:
    """For each stale page: base → disk, base → proposed and disk → proposed."""
    parts: list[RenderableType] = []
    for item in review.three_way:
        promoted = review.promoted_lines(item.path)
        parts.append(
            Text(
                f"\u25b2 stale: {one_line(item.path)} changed on disk since the proposal was made",
                style=f"bold {colours.get('warning', '')}",
            )
        )
        if not item.base_available:
            parts.append(
                Text(
                    "  the base version is not kept (no blob, no git history): showing disk \u2192 proposed only",
                    style=colours.get("warning", ""),
                )
            )
        else:
            parts.append(Text("  base \u2192 disk (edits made since; approving replaces them):", style="bold"))
            parts.append(diff_view(item.base_to_disk, colours, side=side, expand=expand))
            parts.append(Text("  base \u2192 proposed (what the job changed):", style="bold"))
            parts.append(diff_view(item.base_to_proposed, colours, side=side, promoted=promoted, expand=expand))
        parts.append(Text("  disk \u2192 proposed (what approving writes):", style="bold"))
        parts.append(diff_view(item.disk_to_proposed, colours, side=side, promoted=promoted, expand=expand))
    return parts


def diff_view(
    diff: Any, colours: Colours, *, side: bool = False, promoted: set[int] | None = None, expand: bool = True
) -> RenderableType:
    """One page's diff, unified or side by side, the lines whose tag the change raises marked."""
    chosen = promoted or set()
    return side_by_side(diff, colours, chosen, expand=expand) if side else unified(diff, colours, chosen)
