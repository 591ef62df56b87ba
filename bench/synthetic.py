"""A realistic synthetic memory field for the benchmark.

``generate_field(root, n)`` writes ``n`` pages shaped like a real agent's memory:
YAML frontmatter (id, title, summary, kind, subject, dates, origin, review and
taint markers, sources, ``supersedes``), a body of 10-30 claim lines each ending
in a source tag, wikilinks and ``[cite:N]`` citations, pages spread over nested
folders, decision pages in supersede chains of 2-4 versions, and about 5% of the
pages quarantined (unreviewed, ``taint: external``, under ``quarantine/``).

Text is drawn from a fixed vocabulary with a Zipf-like distribution, so term
statistics look like prose rather than uniform noise. Everything is seeded: the
same ``(n, seed, script)`` gives the same bytes.

``script="cjk"`` writes a CJK-heavy field instead: titles, summaries and claim
lines in Chinese and Japanese (words of two to four characters from a seeded
vocabulary of common Han characters, kana words and real domain words, run
together without spaces, with CJK punctuation), about one word in twelve an
English word or an identifier, as agent memories in those languages are.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

COMMON = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "it",
    "at",
    "from",
    "be",
    "this",
    "have",
    "are",
    "not",
    "but",
    "had",
    "his",
    "they",
    "which",
    "or",
    "were",
    "one",
    "all",
    "we",
    "there",
    "been",
    "has",
    "when",
    "who",
    "will",
    "more",
    "no",
    "if",
    "out",
    "so",
    "said",
    "what",
    "up",
    "its",
    "about",
    "into",
    "than",
    "them",
    "can",
    "only",
    "other",
    "new",
    "some",
    "could",
    "time",
    "these",
    "two",
    "may",
    "then",
    "do",
    "first",
    "any",
    "my",
    "now",
    "such",
    "like",
    "our",
    "over",
    "man",
    "me",
    "even",
    "most",
    "made",
    "after",
    "also",
    "did",
    "many",
    "before",
    "must",
    "through",
    "back",
    "years",
    "where",
    "much",
    "your",
    "way",
    "well",
    "down",
    "should",
    "because",
    "each",
    "just",
    "those",
    "people",
    "how",
    "too",
    "little",
    "state",
    "good",
    "very",
    "make",
    "world",
    "still",
    "own",
    "see",
    "men",
    "work",
    "long",
    "get",
    "here",
    "between",
    "both",
    "life",
    "being",
    "under",
    "never",
    "day",
    "same",
    "another",
    "know",
    "while",
    "last",
    "might",
    "us",
    "great",
    "old",
    "year",
    "off",
    "come",
    "since",
    "against",
    "go",
    "came",
    "right",
    "used",
    "take",
    "three",
]

DOMAIN = [
    "api",
    "shipment",
    "container",
    "freight",
    "carrier",
    "invoice",
    "pricing",
    "contract",
    "renewal",
    "pilot",
    "customer",
    "deploy",
    "release",
    "staging",
    "migration",
    "database",
    "postgres",
    "lock",
    "webhook",
    "retry",
    "incident",
    "outage",
    "dashboard",
    "tracking",
    "driver",
    "route",
    "warehouse",
    "customs",
    "broker",
    "tariff",
    "quote",
    "budget",
    "hosting",
    "region",
    "latency",
    "throughput",
    "queue",
    "worker",
    "schedule",
    "cadence",
    "review",
    "decision",
    "roadmap",
    "sprint",
    "onboarding",
    "support",
    "ticket",
    "escalation",
    "sla",
    "uptime",
    "alert",
    "metric",
    "report",
    "digest",
    "summary",
    "meeting",
    "standup",
    "retro",
    "planning",
    "kickoff",
    "architecture",
    "schema",
    "endpoint",
    "client",
    "sdk",
    "typescript",
    "python",
    "vendor",
    "partner",
    "integration",
    "edi",
    "status",
    "message",
    "payload",
    "format",
    "version",
    "rollout",
    "feature",
    "flag",
    "experiment",
    "cohort",
    "churn",
    "revenue",
    "margin",
    "discount",
    "minimum",
    "volume",
    "forecast",
    "hiring",
    "engineer",
    "designer",
    "manager",
    "director",
    "operations",
    "procurement",
    "policy",
    "compliance",
    "audit",
    "security",
    "token",
    "credential",
    "rotation",
    "backup",
    "restore",
    "snapshot",
    "index",
    "search",
    "cache",
    "memory",
    "note",
    "page",
    "session",
]

FIRST = [
    "Maya",
    "Dana",
    "Luis",
    "Priya",
    "Tomasz",
    "Hannah",
    "Omar",
    "Ines",
    "Kenji",
    "Zara",
    "Felix",
    "Ada",
    "Bruno",
    "Chloe",
    "Diego",
    "Elif",
]
LAST = [
    "Okafor",
    "Ruiz",
    "Carvalho",
    "Raman",
    "Wierzbicki",
    "Lee",
    "Haddad",
    "Moreau",
    "Sato",
    "Khan",
    "Weber",
    "Lovelace",
    "Costa",
    "Dubois",
]
SYLLABLES = [
    "ka",
    "ri",
    "to",
    "ne",
    "mo",
    "la",
    "su",
    "vi",
    "pe",
    "do",
    "ra",
    "ze",
    "li",
    "an",
    "or",
    "el",
    "us",
    "im",
    "ot",
    "ba",
    "ku",
    "fe",
    "ni",
    "go",
]

# The CJK field: common Han characters for coined words, real domain words in Chinese and
# Japanese, kana function words, and the Latin words mixed into such text.
HAN = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说"
    "产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从"
    "业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么"
    "利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常"
    "文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被"
    "干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六"
    "共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科"
    "张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验"
)
KANA = [
    "です",
    "ます",
    "した",
    "する",
    "ない",
    "ある",
    "いる",
    "から",
    "まで",
    "など",
    "について",
    "として",
    "による",
    "ための",
]
CJK_DOMAIN = [
    "物流",
    "集装箱",
    "运输",
    "港口",
    "安全检查",
    "部署",
    "数据库",
    "迁移",
    "飞书",
    "机器人",
    "消息",
    "推送",
    "客户",
    "合同",
    "价格",
    "发布",
    "预发环境",
    "监控",
    "告警",
    "记忆",
    "决策",
    "会议",
    "周报",
    "偏好",
    "コンテナ",
    "ボリューム",
    "保存場所",
    "通関",
    "書類",
    "デプロイ",
    "データベース",
    "検索",
    "設定",
    "手順",
]
LATIN_MIX = [
    "API",
    "Harbor",
    "Postgres",
    "webhook",
    "SLA",
    "deploy",
    "staging",
    "harbor_sync.py",
    "retryWithJitter",
    "PR-447",
    "v1.4",
    "EDI 214",
    "Feishu",
    "OpenClaw",
]
CJK_FIRST = ["王", "李", "张", "刘", "陈", "杨", "佐藤", "鈴木", "高橋", "田中"]
CJK_LAST = ["芳", "伟", "娜", "敏", "静", "强", "健", "美咲", "翔太", "陽菜"]

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


def _coined_cjk_words(rng: random.Random, count: int) -> list[str]:
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(HAN) for _ in range(rng.choice((2, 2, 2, 3, 4)))))
    return sorted(words)


@dataclass
class Vocabulary:
    words: list[str]
    cum_weights: list[float]
    cjk: bool = False

    @classmethod
    def build(cls, rng: random.Random, script: str = "latin") -> Vocabulary:
        cjk = script == "cjk"
        common = KANA if cjk else COMMON
        coined = _coined_cjk_words(rng, 4000) if cjk else _coined_words(rng, 4000)
        words = list(dict.fromkeys(common + (CJK_DOMAIN if cjk else DOMAIN) + coined))
        rng.shuffle(words)
        # Zipf: weight 1/rank, but keep the very common words near the top.
        ordered = common + [w for w in words if w not in set(common)]
        cum: list[float] = []
        total = 0.0
        for rank in range(1, len(ordered) + 1):
            total += 1.0 / rank
            cum.append(total)
        return cls(ordered, cum, cjk)

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


def _sentence(rng: random.Random, vocab: Vocabulary, low: int = 6, high: int = 16) -> str:
    words = vocab.sample(rng, rng.randint(low, high))
    if vocab.cjk:
        # Words run together; now and then a comma, an English word or an identifier.
        out = []
        for word in words:
            if rng.random() < 0.08:
                out.append(f" {rng.choice(LATIN_MIX)} ")
            out.append(word)
            if rng.random() < 0.12:
                out.append("，")
        return "".join(out).strip("，").strip()
    words[0] = words[0].capitalize()
    return " ".join(words)


def _person(rng: random.Random, cjk: bool = False) -> str:
    if cjk:
        return f"{rng.choice(CJK_FIRST)}{rng.choice(CJK_LAST)}"
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
            sub = (
                f"{folder}/{rng.choice(SYLLABLES)}"
                if folder
                in (
                    "notes",
                    "knowledge/entities",
                    "knowledge/concepts",
                    "sessions",
                )
                else folder
            )
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
                            title=(
                                f"关于{topic.replace('-', '')}的决定（第{version + 1}版）"
                                if vocab.cjk
                                else f"Decision on {topic.replace('-', ' ')} (version {version + 1})"
                            ),
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
                    title=(
                        _person(rng, vocab.cjk)
                        if folder == "people"
                        else topic.replace("-", "")
                        if vocab.cjk
                        else topic.replace("-", " ").title()
                    ),
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
        lines.append(f"- {text}{'。' if vocab.cjk else '.'} [{tag}]")
    lines.append("")
    return "\n".join(lines)


def generate_field(root: Path, n: int, *, seed: int = 7, script: str = "latin") -> list[str]:
    """Write ``n`` pages under ``root`` (``script``: "latin" or "cjk"); return their relative paths."""
    rng = random.Random(seed)
    vocab = Vocabulary.build(rng, script)
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


def query_words(seed: int = 11, script: str = "latin") -> list[str]:
    """Plausible one- to three-word queries over the synthetic vocabulary (of ``script``).

    Words are drawn as the pages draw them (Zipf), leaving out the most frequent band of
    the vocabulary, as wide in both scripts: in the English field that band is exactly the
    stop words (``COMMON``); in the CJK field it is the kana function words and the coined
    Han words as frequent as English stop words (in about two pages of three), which a
    person does not search for either. Until 2026-12-01 the CJK queries left out only the
    kana, so a third of them were stop-word-frequent words (the figures before then are
    not comparable with the English column)."""
    rng = random.Random(seed)
    vocab = Vocabulary.build(random.Random(7), script)
    common = set(vocab.words[: len(COMMON)])
    queries = []
    for i in range(200):
        k = 1 + i % 3
        words = [w for w in vocab.sample(rng, k * 3) if w not in common][:k] or [vocab.words[-1]]
        queries.append(" ".join(words))
    return queries


def write_long_page(root: Path, rel: str, lines: int, *, seed: int = 5) -> Path:
    """One page of ``lines`` body lines, as a long-lived agent's log grows: frontmatter, a
    heading every 40 lines, short tagged claim lines (one in twenty long enough to wrap,
    some struck through as superseded), wikilinks and ``[cite:N]`` citations. 50,000 lines
    stay under the 2 MB a page may have to be parsed."""
    rng = random.Random(seed)
    vocab = Vocabulary.build(rng)
    out = [
        "---",
        "id: mem_longlog",
        'title: "A very long running log"',
        "kind: episodic",
        "origin: agent",
        "reviewed: false",
        "sources:",
        "  - sessions/2026-01-01-meeting.md#L3",
        "---",
    ]
    while len(out) < lines:
        number = len(out) + 1
        if number % 40 == 0:
            out += ["", f"## Week {number // 40}", ""]
            continue
        text = _sentence(rng, vocab, 16, 30) if rng.random() < 0.05 else _sentence(rng, vocab, 2, 6)
        if rng.random() < 0.05:
            text += " with [[Decision on api pricing]]"
        if rng.random() < 0.05:
            text += " [cite:1]"
        tag = rng.choices(TAGS, weights=TAG_WEIGHTS)[0]
        if rng.random() < 0.03:
            out.append(f"- ~~{text} [{tag}]~~ superseded 2026-02-0{rng.randint(1, 9)}")
        else:
            out.append(f"- {text}. [{tag}]")
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(out[:lines]) + "\n", encoding="utf-8")
    return target
