"""A realistic synthetic memory field for the benchmark.

``generate_field(root, n)`` writes ``n`` pages shaped like a real agent's memory:
YAML frontmatter (id, title, summary, kind, subject, dates, origin, review and
taint markers, sources, ``supersedes``), a body of 10-30 claim lines each ending
in a source tag, wikilinks and ``[cite:N]`` citations, pages spread over nested
folders, decision pages in supersede chains of 2-4 versions, and about 5% of the
pages quarantined (unreviewed, ``taint: external``, under ``quarantine/``).

Text is drawn from a fixed vocabulary with a Zipf-like distribution, so term
statistics look like prose rather than uniform noise. Everything is seeded: the
same ``(n, seed)`` gives the same bytes.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

COMMON = ["the", "of", "and", "to", "a", "in", "is", "was", "for", "on", "that", "with", "as", "by", "it", "at", "from", "be", "this", "have", "are", "not", "but", "had", "his", "they", "which", "or", "were", "one", "all", "we", "there", "been", "has", "when", "who", "will", "more", "no", "if", "out", "so", "said", "what", "up", "its", "about", "into", "than", "them", "can", "only", "other", "new", "some", "could", "time", "these", "two", "may", "then", "do", "first", "any", "my", "now", "such", "like", "our", "over", "man", "me", "even", "most", "made", "after", "also", "did", "many", "before", "must", "through", "back", "years", "where", "much", "your", "way", "well", "down", "should", "because", "each", "just", "those", "people", "how", "too", "little", "state", "good", "very", "make", "world", "still", "own", "see", "men", "work", "long", "get", "here", "between", "both", "life", "being", "under", "never", "day", "same", "another", "know", "while", "last", "might", "us", "great", "old", "year", "off", "come", "since", "against", "go", "came", "right", "used", "take", "three"]

DOMAIN = ["api", "shipment", "container", "freight", "carrier", "invoice", "pricing", "contract", "renewal", "pilot", "customer", "deploy", "release", "staging", "migration", "database", "postgres", "lock", "webhook", "retry", "incident", "outage", "dashboard", "tracking", "driver", "route", "warehouse", "customs", "broker", "tariff", "quote", "budget", "hosting", "region", "latency", "throughput", "queue", "worker", "schedule", "cadence", "review", "decision", "roadmap", "sprint", "onboarding", "support", "ticket", "escalation", "sla", "uptime", "alert", "metric", "report", "digest", "summary", "meeting", "standup", "retro", "planning", "kickoff", "architecture", "schema", "endpoint", "client", "sdk", "typescript", "python", "vendor", "partner", "integration", "edi", "status", "message", "payload", "format", "version", "rollout", "feature", "flag", "experiment", "cohort", "churn", "revenue", "margin", "discount", "minimum", "volume", "forecast", "hiring", "engineer", "designer", "manager", "director", "operations", "procurement", "policy", "compliance", "audit", "security", "token", "credential", "rotation", "backup", "restore", "snapshot", "index", "search", "cache", "memory", "note", "page", "session"]

FIRST = ["Maya", "Dana", "Luis", "Priya", "Tomasz", "Hannah", "Omar", "Ines", "Kenji", "Zara", "Felix", "Ada", "Bruno", "Chloe", "Diego", "Elif"]
LAST = ["Okafor", "Ruiz", "Carvalho", "Raman", "Wierzbicki", "Lee", "Haddad", "Moreau", "Sato", "Khan", "Weber", "Lovelace", "Costa", "Dubois"]
SYLLABLES = ["ka", "ri", "to", "ne", "mo", "la", "su", "vi", "pe", "do", "ra", "ze", "li", "an", "or", "el", "us", "im", "ot", "ba", "ku", "fe", "ni", "go"]

TAGS = ("stated", "observed", "inferred", "suggested")
TAG_WEIGHTS = (5, 4, 2, 1)
KINDS = ("semantic", "episodic", "procedural", "preference")

# (folder, share of pages)
FOLDERS = (
    ("knowledge/entities", 0.10),
    ("knowledge/concepts", 0.10),
    ("people", 0.06),
    ("projects", 0.07),
    ("decisions", 0.14),
    ("notes", 0.26),
    ("daily", 0.08),
    ("sessions", 0.10),
    ("quarantine", 0.05),
    ("procedures", 0.04),
)


def _coined_words(rng: random.Random, count: int) -> list[str]:
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


@dataclass
class Vocabulary:
    words: list[str]
    cum_weights: list[float]

    @classmethod
    def build(cls, rng: random.Random) -> Vocabulary:
        words = list(dict.fromkeys(COMMON + DOMAIN + _coined_words(rng, 4000)))
        rng.shuffle(words)
        # Zipf: weight 1/rank, but keep the very common words near the top.
        ordered = COMMON + [w for w in words if w not in set(COMMON)]
        cum: list[float] = []
        total = 0.0
        for rank in range(1, len(ordered) + 1):
            total += 1.0 / rank
            cum.append(total)
        return cls(ordered, cum)

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


def _sentence(rng: random.Random, vocab: Vocabulary, low: int = 6, high: int = 16) -> str:
    words = vocab.sample(rng, rng.randint(low, high))
    words[0] = words[0].capitalize()
    return " ".join(words)


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


@dataclass
class PagePlan:
    rel: str
    ident: str
    title: str
    subject: str
    kind: str
    folder: str
    supersedes: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    quarantined: bool = False


def _plan(n: int, rng: random.Random, vocab: Vocabulary) -> list[PagePlan]:
    plans: list[PagePlan] = []
    counts = [max(1, round(n * share)) for _, share in FOLDERS]
    counts[FOLDERS.index(("notes", 0.26))] += n - sum(counts)
    serial = 0
    for (folder, _), count in zip(FOLDERS, counts):
        made = 0
        while made < count:
            topic = "-".join(vocab.sample(rng, 2))
            sub = f"{folder}/{rng.choice(SYLLABLES)}" if folder in (
                "notes",
                "knowledge/entities",
                "knowledge/concepts",
                "sessions",
            ) else folder
            if folder == "decisions":
                length = min(rng.randint(2, 4), count - made)
                subject = f"decision/{topic}"
                for version in range(length):
                    serial += 1
                    ident = f"mem_{serial:06x}"
                    plans.append(
                        PagePlan(
                            rel=f"{sub}/{topic}-v{version + 1}-{serial}.md",
                            ident=ident,
                            title=f"Decision on {topic.replace('-', ' ')} (version {version + 1})",
                            subject=subject,
                            kind="semantic",
                            folder=folder,
                            supersedes=plans[-1].ident if version else None,
                            valid_from=f"2026-{3 * version + 1:02d}-15",
                            valid_to=None if version == length - 1 else f"2026-{3 * version + 4:02d}-15",
                        )
                    )
                    made += 1
                continue
            serial += 1
            plans.append(
                PagePlan(
                    rel=f"{sub}/{topic}-{serial}.md",
                    ident=f"mem_{serial:06x}",
                    title=(_person(rng) if folder == "people" else topic.replace("-", " ").title()),
                    subject=f"{folder.split('/')[-1]}/{topic}",
                    kind=rng.choice(KINDS),
                    folder=folder,
                    quarantined=folder == "quarantine",
                )
            )
            made += 1
    return plans[:n]


def render_page(plan: PagePlan, rng: random.Random, vocab: Vocabulary, titles: list[str]) -> str:
    day = rng.randint(1, 28)
    month = rng.randint(1, 12)
    if plan.valid_from:
        month, day = int(plan.valid_from[5:7]), int(plan.valid_from[8:10])
    lines = [
        "---",
        f"id: {plan.ident}",
        f'title: "{plan.title}"',
        f'summary: "{_sentence(rng, vocab, 8, 14)}"',
        f"kind: {plan.kind}",
        f"subject: {plan.subject}",
        f"created: 2026-{month:02d}-{day:02d}T09:00:00Z",
        f"updated: 2026-{month:02d}-{day:02d}T17:30:00Z",
        f"valid_from: 2026-{month:02d}-{day:02d}",
        f"valid_to: {plan.valid_to or 'null'}",
        f"confidence: {rng.randint(50, 99) / 100}",
        f"origin: {'external' if plan.quarantined else rng.choice(('agent', 'agent', 'user', 'job'))}",
        f"reviewed: {'false' if plan.quarantined else rng.choice(('true', 'true', 'false'))}",
        f"taint: {'external' if plan.quarantined else 'null'}",
        "sources:",
        f"  - sessions/2026-{month:02d}-{day:02d}-meeting.md#L{rng.randint(1, 80)}",
    ]
    if plan.supersedes:
        lines.append(f"supersedes: [{plan.supersedes}]")
    lines += ["---", f"# {plan.title}", ""]
    for _ in range(rng.randint(10, 30)):
        text = _sentence(rng, vocab)
        if rng.random() < 0.15:
            text += f" with [[{rng.choice(titles)}]]"
        if rng.random() < 0.2:
            text += " [cite:1]"
        tag = rng.choices(TAGS, weights=TAG_WEIGHTS)[0]
        lines.append(f"- {text}. [{tag}]")
    lines.append("")
    return "\n".join(lines)


def generate_field(root: Path, n: int, *, seed: int = 7) -> list[str]:
    """Write ``n`` pages under ``root``; return their relative paths."""
    rng = random.Random(seed)
    vocab = Vocabulary.build(rng)
    plans = _plan(n, rng, vocab)
    titles = [p.title for p in plans[: min(len(plans), 500)]]
    (root / "MEMORY.md").parent.mkdir(parents=True, exist_ok=True)
    for plan in plans:
        target = root / plan.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_page(plan, rng, vocab, titles), encoding="utf-8")
    return [p.rel for p in plans]


def rewrite_page(root: Path, rel: str, marker: str) -> None:
    """Rewrite a page the way an editor does (temp file + rename), adding ``marker``."""
    target = root / rel
    text = target.read_text(encoding="utf-8")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(text + f"- Added {marker} during the benchmark. [observed]\n", encoding="utf-8")
    os.replace(tmp, target)


def query_words(seed: int = 11) -> list[str]:
    """Plausible one- to three-word queries over the synthetic vocabulary."""
    rng = random.Random(seed)
    vocab = Vocabulary.build(random.Random(7))
    queries = []
    for i in range(200):
        k = 1 + i % 3
        words = [w for w in vocab.sample(rng, k * 3) if w not in COMMON][:k] or ["shipment"]
        queries.append(" ".join(words))
    return queries
