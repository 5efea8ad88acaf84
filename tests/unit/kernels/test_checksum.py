"""kernels.cpu.checksum: an array's checksum depends on its bytes only (not on what it is batched with, nor on
whether the pieces ran on the threads), and any changed byte changes it."""
import numpy as np
import pytest

from numgrad.kernels.cpu import checksum


def _arrays():
    rng = np.random.default_rng(0)
    big = rng.standard_normal(3 * checksum.PIECE // 4 + 5).astype(np.float32)  # several pieces, one cut short
    return [big, rng.standard_normal((3, 4)), np.zeros(0, np.float32), np.float64(2.5) * np.ones(()),
            rng.standard_normal((40, 30)).T, np.arange(7) > 3]  # a transposed (not C-contiguous) one, bools


def test_batched_threaded_and_one_at_a_time_agree(monkeypatch):
    arrays = _arrays()
    together = checksum.checksums(arrays)
    alone = [checksum.checksums([a])[0] for a in arrays]
    monkeypatch.setattr(checksum, "THREADED_MIN", 1 << 60)
    serial = checksum.checksums(arrays)
    assert together == alone == serial
    assert len(together[0]) == 4 and len(together[2]) == 1  # 3 pieces and 20 bytes; an empty array: one piece


@pytest.mark.parametrize("where", [0, checksum.PIECE // 4 + 1, -1])  # first piece, second, last byte
def test_any_changed_byte_changes_the_checksum(where):
    arrays = _arrays()
    before = checksum.checksums(arrays)
    big = arrays[0].view(np.uint8)
    big[where] ^= 1
    after = checksum.checksums(arrays)
    assert after[0] != before[0] and after[1:] == before[1:]
    big[where] ^= 1
    assert checksum.checksums(arrays) == before
