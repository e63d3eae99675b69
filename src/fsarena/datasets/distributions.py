"""Seeded distributions and text, bit-identical everywhere: Pareto, Poisson, normal, Zipf text.

Every number comes from PCG64's raw output with IEEE-754 +, ×, ÷ and fixed
polynomials for exp (fsarena.datasets.numeric) and ln (here), never the platform's
maths library, whose last bit may differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsarena.datasets.numeric import poly_exp, raw_words, uniforms
from fsarena.datasets.spec import MIB

if TYPE_CHECKING:
    import numpy as np

    from fsarena.datasets.numeric import FloatArray

_LN2 = 0.6931471805599453

# Tokens at the head of the Zipf ranking, as in C-like source; the rest are made-up words.
_SPECIAL_TOKENS = (
    "\n",
    "\n\t",
    ";",
    "(",
    ")",
    "=",
    "\n\t\t",
    "{",
    "}",
    ",",
    "if",
    "return",
    "int",
    "->",
    "*",
    "struct",
    "static",
    "0",
    "&",
    "/*",
    "*/",
    "\n\t\t\t",
    "const",
    "void",
    "unsigned",
    "1",
    "NULL",
    "+",
    "#include",
    "#define",
)
_VOCABULARY_WORDS = 2048
_LINE_STOCK_BYTES = MIB
_LINE_ZIPF = 1.1  # gzip -6 then compresses the text 4.3:1 (Linux drivers/net: 4.7:1)
_LETTERS = b"etaoinshrdlcumwfgypbvkxjqz_etaoinsrl"


def _ln(x: FloatArray) -> FloatArray:
    """Natural log of positive floats with IEEE +, ×, ÷ only (atanh series; frexp is exact)."""
    import numpy as np

    m, e = np.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    s = (m - 1.0) / (m + 1.0)  # |s| <= 1/3
    s2 = s * s
    total = np.zeros_like(s)
    for k in range(31, 0, -2):  # Horner on s * (1 + s²/3 + s⁴/5 + ...)
        total = total * s2 + 1.0 / k
    result: FloatArray = 2.0 * s * total + e.astype(np.float64) * _LN2
    return result


def pareto(u: FloatArray, minimum: float, alpha: float) -> FloatArray:
    """Pareto(minimum, alpha) by inversion; u uniform in [0, 1)."""
    return minimum * poly_exp(-_ln(1.0 - u) / alpha)


def normal_irwin_hall(stream: np.random.PCG64, n: int) -> FloatArray:
    """Approximately standard normal: sum of 12 uniforms minus 6 (as TreeSpec does)."""
    raw = raw_words(stream, 12 * n).reshape(12, n)
    z = uniforms(raw[0])
    for row in raw[1:]:
        z += uniforms(row)
    z -= 6.0
    return z


def poisson_cdf(lam: float, kmax: int) -> FloatArray:
    """CDF of Poisson(lam) at 0..kmax, the last entry forced to 1."""
    import numpy as np

    p = float(poly_exp(np.array([-lam]))[0])
    cdf = []
    acc = 0.0
    for k in range(kmax + 1):
        acc += p
        cdf.append(acc)
        p = p * lam / (k + 1)
    cdf[-1] = 1.0
    return np.array(cdf)


# --------------------------------------------------------------------------- text


def text_pool(stream: np.random.PCG64, n_bytes: int) -> bytes:
    """n_bytes of text: lines drawn with Zipf frequencies from a stock of token lines.

    Tokens (C-like specials first, then made-up words) are drawn with Zipf
    frequencies into a 1 MiB stock; its lines, drawn again with Zipf
    frequencies, make the pool. Source code repeats whole lines (braces,
    returns, common calls), which is what gzip and bzip2 exploit.
    """
    stock = _zipf_join(stream, _vocabulary(stream), _LINE_STOCK_BYTES, 1.0)
    lines = [line + b"\n" for line in stock.split(b"\n")[1:-1]]
    return _zipf_join(stream, lines, n_bytes, _LINE_ZIPF)[:n_bytes]


def _zipf_join(stream: np.random.PCG64, items: list[bytes], n_bytes: int, exponent: float) -> bytes:
    """Items drawn with Zipf(exponent) frequencies by rank, joined, at least n_bytes long."""
    import numpy as np

    ranks = np.arange(1, len(items) + 1, dtype=np.float64)
    weights = poly_exp(-exponent * _ln(ranks))
    cum = np.cumsum(weights)
    mean_len = float(np.dot(weights, [len(i) for i in items])) / float(cum[-1])
    batch = int(n_bytes / mean_len) + 1024
    parts: list[bytes] = []
    size = 0
    while size < n_bytes:  # a fixed batch size keeps the draws deterministic
        ids = np.searchsorted(cum, uniforms(raw_words(stream, batch)) * cum[-1], side="right")
        chunk = b"".join([items[i] for i in np.minimum(ids, len(items) - 1).tolist()])
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def _vocabulary(stream: np.random.PCG64) -> list[bytes]:
    """Special tokens, then made-up words of 2..12 letters, each word followed by a space."""
    import numpy as np

    words = raw_words(stream, _VOCABULARY_WORDS * 13).reshape(_VOCABULARY_WORDS, 13)
    lengths = 2 + words[:, 0] % np.uint64(11)
    alphabet = np.frombuffer(_LETTERS, dtype=np.uint8)
    letters = alphabet[(words[:, 1:] % np.uint64(len(alphabet))).astype(np.int64)]
    made = [bytes(row[: int(n)]) + b" " for row, n in zip(letters, lengths, strict=True)]
    specials = [t.encode() + (b"" if t.startswith("\n") else b" ") for t in _SPECIAL_TOKENS]
    return specials + made
