"""What each agent will be told next session: the one computation of it.

The auditor's question is what an agent loads from this field when a session starts,
in what order, and where its caps cut a file. Each dialect says how its agent loads its
files (``dialects.loading``); this module puts that together with the field's findings:
the findings of ``DANGEROUS`` rules in what an agent loads by itself are the ones that
reach a session without anyone choosing to read them. ``memtui context``, the overview
and the context screen all read it from here.

Nothing is claimed without evidence: a format no agent is known to load by itself, and a
field where memtui found no agent's own files, are said as such (``ContextReport.unknown``)
with how to show more.
"""

from __future__ import annotations

from collections.abc import Iterable

from memtui.dialects.base import Dialect
from memtui.dialects.detect import BY_NAME
from memtui.dialects.loading import AUTOMATIC, ContextReport
from memtui.dialects.reader import DialectReader
from memtui.field.checks import Finding, check_page_local, make_finding
from memtui.field.field import Field

# Rules whose findings matter most in a file an agent loads by itself: text that steers or
# leaks (secrets, hidden characters, look-alike tags, leftover tool markup, merge debris),
# imports leaving the field, and pages nobody reviewed.
DANGEROUS = frozenset(
    {
        "secret",
        "tool-markup",
        "conflict-markers",
        "import-outside",
        "import-credential",
        "lookalike-tag",
        "control-chars",
        "bidi-override",
        "zero-width",
        "loaded-untrusted",
        "symlink-outside",
    }
)

NO_AGENT = (
    "memtui found no agent's own files here (CLAUDE.md, .claude/, AGENTS.md, .serena/, an OpenClaw "
    "workspace, memtui's IDENTITY.md or MEMORY.md), so it cannot tell what an agent loads from this "
    "folder: open the folder the agent works in, or read it as one format with --dialect NAME"
)


def dangerous_findings(field: Field, paths: set[str]) -> list[Finding]:
    """The findings of ``DANGEROUS`` rules on ``paths``, as the rules find them: ``memtui.toml``
    cannot switch these off or down here (a field's own file never hides what its agent loads)."""
    found: list[Finding] = []
    for path in sorted(paths):
        info = field.pages.get(path)
        if info is not None:
            found.extend(f for f in check_page_local(info) if f.rule in DANGEROUS)
    found.extend(f for f in field.reader.checks(field) if f.rule in DANGEROUS and f.path in paths)
    found.extend(
        make_finding(problem.rule, problem.path, None, problem.message)
        for problem in field.scan_problems
        if problem.rule in DANGEROUS and problem.path in paths
    )
    return found


def loaded_context(field: Field, findings: Iterable[Finding] | None = None, *, all_files: bool = True) -> ContextReport:
    """Every agent's context from ``field``: its files in load order, measured and cut, with the
    findings of ``DANGEROUS`` rules on what it loads by itself (``findings``: the field's, run
    here when not given). ``all_files=False``: only what the agents load by themselves."""
    reader = field.reader
    if not isinstance(reader, DialectReader):
        return ContextReport([], [], [NO_AGENT])
    loads = reader.loads(field, all_files=all_files)
    if findings is None:
        findings = dangerous_findings(field, {f.path for f in loads[0] if f.loaded in AUTOMATIC})
    report = reader.context(field, findings, DANGEROUS, all_files=all_files, loads=loads)
    loading = {agent.agent for agent in report.agents}
    for applied, dialect in reader.instances:
        if type(dialect).context is Dialect.context and dialect.name != "markdown":  # says nothing of loading
            where = f" at {applied.root}/" if applied.root else ""
            report.unknown.append(
                f"{BY_NAME[applied.name].title}{where}: no agent is known to load this format by itself; "
                "what an agent reads of it depends on instructions memtui cannot see"
            )
    for skipped in reader.detection.skipped:  # what memtui did not read may be loaded too
        report.unknown.append(f"not read: {skipped.words()} (what an agent loads from it is not shown here)")
    if not loading:
        report.unknown.append(NO_AGENT)
    return report
