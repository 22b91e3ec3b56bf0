"""Regular expressions typed by users: the one validator and the one matcher, both RE2.

Crawler traps (per domain, per definition, global trap lists, live ``add_trap``), the web UI's
crawl-log search and trap preview all take a regular expression from a person. A backtracking engine
(Python's ``re``, Java's) needs exponential time on patterns such as ``(.|.)*Z`` or
``.*(.*/)*calendar/.*`` against a long URL, and no guard on the pattern's shape catches them all. RE2
matches in time linear in the text for every pattern it accepts, so the problem is gone by
construction; what RE2 cannot express (backreferences, lookaround, atomic groups, possessive
repeats) is refused with a one-line message that says why and where.

Every entry point calls :func:`check` (or :func:`compile_pattern`): the orchestrator's form and model
validators (lists: :func:`check_lines`), the JobSpec and Control contracts, the web UI's search and
preview; one live trap typed by a person (web UI, API, ``jobs add-trap``, dispatch) goes through
:func:`trap`. Pure module: the harvester uses it and never imports Django.

Semantics of traps: Heritrix's ``matches()``, i.e. the whole URI must match (:class:`FullMatchSet`).

:class:`FullMatchSet` matches many patterns as few RE2 programs: each *chunk* of patterns is one
alternation compiled once (at most :data:`CHUNK_PATTERNS` patterns, :data:`CHUNK_CHARS` characters),
so 100,000 traps cost one DFA walk per chunk and URI (benchmarks/bench_traps.py). Adding patterns
compiles only the new ones: they form a new chunk, merged with the previous small chunk only when that
one is no bigger than the batch (a binary counter: each pattern is recompiled O(log n) times at most,
and there are O(log n) small chunks). A chunk is an alternation, not an ``re2.Set``: when a chunk's
DFA runs out of memory RE2 falls back to its NFA (still linear, slower), where ``re2.Set.Match``
would answer "no match" without a word, i.e. let trapped URIs through.
"""

from __future__ import annotations

from collections.abc import Iterable

import re2

#: The longest pattern accepted anywhere (a crawler trap in a pasted list is rarely over 200).
MAX_PATTERN_CHARS = 1000
#: Patterns per compiled chunk, and pattern characters per chunk; RE2 memory budget per chunk.
#: Measured (benchmarks/bench_traps.py, 100,000 traps of 48-60 characters: ~100 chunks, bound by
#: CHUNK_CHARS): ~4 s to check and compile, ~0.15 ms per URI. A chunk whose budget is too small
#: for its DFA falls back to the NFA (still linear, ~1,000x slower): at 16 MB that happened, at
#: 32 MB it did not; 64 MB leaves a factor 4. The budget caps each chunk's DFA cache (RE2 resets a
#: full cache), so the worst case is chunks x 64 MB; measured: 250 MB RSS for the 100,000.
CHUNK_PATTERNS = 2000
CHUNK_CHARS = 64 * 1024
CHUNK_MAX_MEM = 64 << 20
#: RE2's budget for one user pattern (its default): what is checked is what a chunk can hold.
PATTERN_MAX_MEM = 8 << 20

ENGINE = "RE2, linear-time regular expressions"
#: The end of a refusal: what the pattern is for, and that RE2 matches it.
TRAPS = f"crawler traps use {ENGINE}"
SEARCH = f"the crawl-log search uses {ENGINE}"
STRIP = f"revisit strip regexes use {ENGINE}"

#: RE2 parse errors that mean "a feature RE2 does not have", with the words a user understands.
_UNSUPPORTED = (
    ("(?=", "lookahead (?=…)"),
    ("(?!", "negative lookahead (?!…)"),
    ("(?<=", "lookbehind (?<=…)"),
    ("(?<!", "negative lookbehind (?<!…)"),
    ("(?P=", "backreference (?P=name)"),
    ("(?>", "atomic group (?>…)"),
    ("(?#", "comment (?#…)"),
    ("(?x", "verbose mode (?x)"),
)


class PatternError(ValueError):
    """A pattern that cannot be used; ``str()`` is one line naming where and why."""


def _options(max_mem: int) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    options.never_capture = True  # groups are never read: smaller programs, faster matching
    options.max_mem = max_mem
    return options


_PATTERN_OPTIONS = _options(PATTERN_MAX_MEM)
_CHUNK_OPTIONS = _options(CHUNK_MAX_MEM)


def _compile(pattern: str, options: re2.Options) -> re2._Regexp:
    # re2.compile() goes through an LRU cache of 128 that rebuilds an Options object on every miss:
    # 2.5x slower over 120,000 distinct lines of a trap list than constructing the program directly.
    return re2._Regexp(pattern, options)


def _reason(pattern: str, detail: str) -> str:
    """Why RE2 refused ``pattern``, in one line, when it is a feature RE2 lacks ("" otherwise)."""
    if "invalid perl operator: " in detail:
        operator = detail.rsplit("invalid perl operator: ", 1)[1]
        for token, name in _UNSUPPORTED:
            # RE2 quotes "(?P" for "(?P=name)": the pattern tells which.
            if operator == token or (operator == "(?P" and token == "(?P=" and token in pattern):
                return f"{name} is not supported"
    if "invalid escape sequence: \\" in detail:
        escape = detail.rsplit("\\", 1)[1][:1]
        if escape.isdigit():
            return f"backreference \\{escape} is not supported"
        if escape == "Z":
            return "\\Z is not supported (write \\z or $ for the end of the text)"
    if "bad repetition operator" in detail and any(op in pattern for op in ("++", "*+", "?+", "}+")):
        return "possessive repeat (a++) is not supported"
    if "invalid repetition size" in detail:
        return "a counted repeat of more than 1,000 (nested repeats multiply) is not supported"
    return ""


def check(pattern: str, where: str, used_for: str = TRAPS) -> str:
    """``pattern`` itself if RE2 accepts it; else :class:`PatternError` ``"<where>: <why>"``.

    ``where`` names the place ("line 12", "domains[3].traps[0]", "search"), ``used_for`` ends a
    refusal of a feature RE2 lacks (:data:`TRAPS`, :data:`SEARCH`): what the pattern is for, and why.
    """
    compile_pattern(pattern, where, used_for)
    return pattern


def compile_pattern(pattern: str, where: str, used_for: str = TRAPS) -> re2._Regexp:
    """The RE2 program of one user pattern (see :func:`check` for the errors)."""
    if not pattern.strip():
        raise PatternError(f"{where}: enter a regular expression")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(
            f"{where}: a regular expression of at most {MAX_PATTERN_CHARS} characters (this one has {len(pattern)})"
        )
    try:
        return _compile(pattern, _PATTERN_OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        reason = _reason(pattern, detail)
        if reason:
            raise PatternError(f"{where}: {reason}: {used_for}") from None
        if "pattern too large" in detail:
            raise PatternError(
                f"{where}: the regular expression is too large for {ENGINE} (make its repeats smaller)"
            ) from None
        raise PatternError(f"{where}: {_short(pattern)} is not a valid regular expression ({detail})") from None


def trap(pattern: str, where: str) -> re2._Regexp:
    """One crawler trap as a person types it (web UI, API, ``jobs add-trap``, dispatch of a live
    ``add_trap``): the surrounding white space dropped (a pasted line's newline), then
    :func:`compile_pattern`. The program's ``.pattern`` is what is stored and sent, so every entry
    point stores the same text for the same input (issue 16)."""
    return compile_pattern(pattern.strip(), where, TRAPS)


def _short(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:77] + "...")


def check_lines(lines: Iterable[tuple[int, str]], used_for: str = TRAPS, where: str = "line ") -> list[str]:
    """The error of every refused ``(line number, pattern)``, one line each (empty: all accepted);
    each names its place as ``where`` + the number (``"line 3"``, or ``"traps.txt:3"``)."""
    errors = []
    for number, line in lines:
        try:
            compile_pattern(line, f"{where}{number}", used_for)
        except PatternError as exc:
            errors.append(str(exc))
    return errors


class FullMatchSet:
    """Patterns each matched against the whole text (Java ``matches()``), as few RE2 programs.

    See the module docstring for the chunking. ``compiled`` counts the patterns compiled into chunk
    programs so far, so tests can see that adding one pattern compiles one pattern.
    """

    def __init__(self, patterns: Iterable[str] = (), checked: bool = False) -> None:
        self.patterns: list[str] = []
        self._known: set[str] = set()
        self._chunks: list[tuple[list[str], list[re2._Regexp]]] = []  # (patterns, programs)
        self.compiled = 0
        self.extend(patterns, checked)

    def extend(self, patterns: Iterable[str], checked: bool = False) -> list[str]:
        """Add the patterns not already here (each validated by :func:`check`); return those added.

        Raises :class:`PatternError` before anything changes if one of them is refused. ``checked``:
        the caller has run :func:`check` on every one (a JobSpec's traps, checked on arrival), so the
        100,000 compiles are not done twice. Unchecked patterns must never reach a chunk: ``a)|(.*``
        is refused alone but would match everything inside ``(?:…)``."""
        new: list[str] = []
        for p in patterns:
            if p and p not in self._known:
                if not checked:
                    check(p, f"pattern {p!r}" if len(p) <= 80 else "pattern")
                self._known.add(p)
                new.append(p)
        if not new:
            return new
        self.patterns.extend(new)
        batches = _split(new)
        for batch in batches:
            # The binary counter: a small last chunk no bigger than this batch is merged into it.
            while self._chunks and len(self._chunks[-1][0]) <= len(batch) and _fits(self._chunks[-1][0], batch):
                batch = self._chunks.pop()[0] + batch
            self._chunks.append((batch, self._program(batch)))
        return new

    def _program(self, batch: list[str]) -> list[re2._Regexp]:
        """One alternation for ``batch``; halves of it if RE2 refuses the whole (too large)."""
        self.compiled += len(batch)
        if len(batch) == 1:
            return [_compile(batch[0], _CHUNK_OPTIONS)]
        try:
            return [_compile("|".join(f"(?:{p})" for p in batch), _CHUNK_OPTIONS)]
        except re2.error:
            half = len(batch) // 2
            return self._program(batch[:half]) + self._program(batch[half:])

    def matches(self, text: str) -> bool:
        """True if one of the patterns matches the whole of ``text``: linear time in ``text``."""
        data = text.encode("utf-8")  # once, not once per chunk: half the cost of a miss
        for _, programs in self._chunks:
            for program in programs:
                if program.fullmatch(data) is not None:
                    return True
        return False

    @property
    def chunks(self) -> int:
        return len(self._chunks)

    def __len__(self) -> int:
        return len(self.patterns)

    def __contains__(self, pattern: object) -> bool:
        return pattern in self._known


def _fits(a: list[str], b: list[str]) -> bool:
    return (
        len(a) + len(b) <= CHUNK_PATTERNS and sum(map(len, a)) + sum(map(len, b)) + 6 * (len(a) + len(b)) <= CHUNK_CHARS
    )


def _split(patterns: list[str]) -> list[list[str]]:
    """``patterns`` cut into chunks within :data:`CHUNK_PATTERNS` and :data:`CHUNK_CHARS`."""
    out: list[list[str]] = []
    current: list[str] = []
    chars = 0
    for p in patterns:
        size = len(p) + 6  # "(?:" ")" "|"
        if current and (len(current) >= CHUNK_PATTERNS or chars + size > CHUNK_CHARS):
            out.append(current)
            current, chars = [], 0
        current.append(p)
        chars += size
    if current:
        out.append(current)
    return out
