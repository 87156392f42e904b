"""The System tab: what ``rlpanel doctor`` reports (``core.machine.doctor``), and Calibrate GPU."""
