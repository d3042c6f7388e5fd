"""The 2x2 group scores written out as an independent loop (shared by the group tests)."""
from __future__ import annotations


def loop_scores(s):
    """Text/image/group of one group (s(A,cA), s(A,cB), s(B,cA), s(B,cB)) with explicit comparisons."""
    aa, ab, ba, bb = s
    text = aa > ab and bb > ba  # image A prefers cA, image B prefers cB
    image = aa > ba and bb > ab  # caption cA prefers A, caption cB prefers B
    return text, image, text and image
