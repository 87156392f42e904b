"""``rlpanel tune``: short real trainings of candidate settings; the fastest that fits (ARCHITECTURE.md, "Throughput tune")."""
