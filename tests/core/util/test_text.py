from core.util.text import clock


def test_clock_reads_like_a_clock():
    assert clock(0) == "0:00" and clock(7.9) == "0:07" and clock(65) == "1:05"
    assert clock(3600) == "1:00:00" and clock(3 * 3600 + 62) == "3:01:02"
    assert clock(-5) == "0:00"  # a run past its budget has no time left, not negative time


def test_ages_and_sizes_read_in_the_unit_that_fits():
    from core.util.text import format_age, format_bytes

    assert [format_age(s) for s in (5, 600, 3 * 3600, 5 * 86400)] == ["5 s", "10 min", "3.0 h", "5 d"]
    assert format_bytes(8 << 30) == "8.0 GiB" and format_bytes(8 << 30, gib_digits=2) == "8.00 GiB"
    assert format_bytes(430 << 20) == "430 MiB" and format_bytes(512) == "512 B"
    assert format_bytes(None) == "n/a" and format_bytes(None, "?") == "?"


def test_numbers_and_durations_read_without_16_digits():
    from core.util.text import format_duration, format_number, significant

    assert significant(7.070183873139369) == 7.07018 and significant(313.1767578125) == 313.177
    assert significant(0.0) == 0.0 and significant(float("inf")) == float("inf")
    assert [format_number(v) for v in (328389632, 23.4, 11.473447607410778, 1687.48, 0.0003, 512.0)] == [
        "328,389,632", "23.4", "11.47", "1,687", "0.0003", "512"]
    assert [format_duration(s) for s in (0.303, 45.2, 65, 7384)] == ["0.3 s", "45 s", "1:05", "2:03:04"]
