"""Page QA's measures, pure functions over screenshots and text (no browser, no database): how alike the replayed
and the live page look and read, thumbnails, and the grouping and ordering the QA page shows.

Screenshot similarity is SSIM (Wang et al. 2004, the measure Browsertrix's QA also reports) on the two
viewport screenshots, grey, scaled to :data:`SSIM_WIDTH` pixels wide, over non-overlapping 8×8 windows. Scaled
down, a missing image or a broken layout still moves whole windows while anti-aliasing and font hinting
differences vanish; and 128×80 pixels in pure Python cost milliseconds, so neither numpy nor scikit-image is
needed (Pillow does the decoding and scaling).

Text similarity is the Jaccard overlap of word 3-shingles (Broder's resemblance, the near-duplicate measure of
web crawlers): linear in the text's length, unlike difflib's ratio, which is quadratic on a long page, and
insensitive to the order blocks are laid out in.
"""

from __future__ import annotations

import io
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from PIL import Image

SSIM_WIDTH = 128
WINDOW = 8
# SSIM's stabilising constants for 8-bit values (K1 = 0.01, K2 = 0.03).
_C1 = (0.01 * 255) ** 2
_C2 = (0.03 * 255) ** 2
THUMB_WIDTH = 320
SHINGLE = 3
_WORD = re.compile(r"\w+", re.UNICODE)


def _grey(png: bytes, size: tuple[int, int] | None = None) -> Image.Image:
    image = Image.open(io.BytesIO(png)).convert("L")
    if size is None:
        height = max(WINDOW, round(image.height * SSIM_WIDTH / max(1, image.width)))
        size = (SSIM_WIDTH, height)
    return image.resize(size, Image.Resampling.BILINEAR)


def _common(a: bytes, b: bytes) -> tuple[Image.Image, Image.Image]:
    """Both pictures cut to the top-left region they share (replay's frame is a viewport less pywb's banner:
    the same page region is compared, not one picture stretched onto the other)."""
    first, second = Image.open(io.BytesIO(a)), Image.open(io.BytesIO(b))
    width, height = min(first.width, second.width), min(first.height, second.height)
    return first.crop((0, 0, width, height)), second.crop((0, 0, width, height))


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def screenshot_similarity(a: bytes, b: bytes) -> float:
    """Mean SSIM of two screenshots (PNG/JPEG bytes), 1.0 for identical pictures, near 0 for unrelated ones.
    Pictures of one shape compare pixel for pixel; otherwise ``b`` is scaled to ``a``'s proportions when they
    differ by more than 10 % (the same page at another size), else both are cut to their common region."""
    ia, ib = Image.open(io.BytesIO(a)), Image.open(io.BytesIO(b))
    if ia.size != ib.size and max(ia.width / ib.width, ib.width / ia.width) <= 1.1:
        a, b = (_png(image) for image in _common(a, b))
    first = _grey(a)
    second = _grey(b, first.size)
    width, height = first.size
    pa, pb = first.tobytes(), second.tobytes()
    scores = []
    for top in range(0, height - WINDOW + 1, WINDOW):
        for left in range(0, width - WINDOW + 1, WINDOW):
            xs, ys = [], []
            for row in range(top, top + WINDOW):
                start = row * width + left
                xs.extend(pa[start : start + WINDOW])
                ys.extend(pb[start : start + WINDOW])
            scores.append(_ssim(xs, ys))
    return round(sum(scores) / len(scores), 4) if scores else 1.0


def _ssim(xs: list[int], ys: list[int]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    vx = sum((x - mx) ** 2 for x in xs) / (n - 1)
    vy = sum((y - my) ** 2 for y in ys) / (n - 1)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (n - 1)
    return ((2 * mx * my + _C1) * (2 * cov + _C2)) / ((mx * mx + my * my + _C1) * (vx + vy + _C2))


def shingles(text: str, k: int = SHINGLE) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORD.findall(text)]
    if len(words) < k:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + k]) for i in range(len(words) - k + 1)}


def text_similarity(a: str, b: str) -> float:
    """Resemblance of two pages' visible texts, 0..1 (1.0: the same words in the same runs; both empty: 1.0)."""
    sa, sb = shingles(a), shingles(b)
    if not sa and not sb:
        return 1.0
    return round(len(sa & sb) / len(sa | sb), 4)


def thumbnail(png: bytes, width: int = THUMB_WIDTH) -> bytes:
    """A small PNG of a screenshot for the QA page (a 1280×800 viewport becomes 320×200, ~20 KB)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    height = max(1, round(image.height * width / max(1, image.width)))
    out = io.BytesIO()
    image.resize((width, height), Image.Resampling.LANCZOS).save(out, "PNG", optimize=True)
    return out.getvalue()


@dataclass(frozen=True)
class Missing:
    url: str
    host: str
    resource_type: str
    page: str  # the page that needed it


def group_missing(missing: Iterable[Missing]) -> list[dict[str, object]]:
    """Missing resources by host, then by type, hosts with the most distinct URLs first: what the curator
    reads to decide on a patch crawl (one host of a CDN missing everything tells a different story from one
    image here and there). Each URL once per type, with the pages that needed it."""
    hosts: dict[str, dict[str, dict[str, list[str]]]] = defaultdict(lambda: defaultdict(dict))
    for m in missing:
        pages = hosts[m.host][m.resource_type].setdefault(m.url, [])
        if m.page not in pages:
            pages.append(m.page)
    out: list[dict[str, object]] = []
    for host, types in hosts.items():
        kinds = [
            {"type": kind, "urls": [{"url": u, "pages": p} for u, p in sorted(urls.items())]}
            for kind, urls in sorted(types.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        ]
        out.append({"host": host, "count": len({u for urls in types.values() for u in urls}), "types": kinds})
    out.sort(key=lambda h: (-int(h["count"]), str(h["host"])))  # type: ignore[call-overload]
    return out


def worst_first(missing: int, failed: bool, similarities: Iterable[float | None], url: str) -> tuple:
    """Sort key of a page on the QA page: pages that did not load, then the most missing resources, then the
    lowest similarity to the live page (a page without a live comparison counts as alike: nothing says
    otherwise)."""
    known = [s for s in similarities if s is not None]
    return (not failed, -missing, min(known) if known else 1.0, url)
