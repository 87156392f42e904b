from core.timefmt import clock


def test_clock_reads_like_a_clock():
    assert clock(0) == "0:00" and clock(7.9) == "0:07" and clock(65) == "1:05"
    assert clock(3600) == "1:00:00" and clock(3 * 3600 + 62) == "3:01:02"
    assert clock(-5) == "0:00"  # a run past its budget has no time left, not negative time
