"""Live pyqtgraph plots of a run: reward, speed, losses and GPU telemetry."""
