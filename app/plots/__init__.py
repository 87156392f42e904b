"""Live pyqtgraph plots of a run: reward, speed, losses and GPU telemetry; and the Results overlay.

``live_plot`` (the plot: series, view, axes), ``axes``, ``series_items``, ``buffers`` (+ segments), ``minmax_levels``,
``drawing``, ``band_item``, ``headroom`` (``FollowViewBox``), ``on_screen`` (``Clip``), ``crosshair``, ``smoothing``
(TensorBoard's EMA), ``reward_plot``, ``training_plots``, ``scalar_grid``, ``system_plots``, ``system_area``,
``overlay`` (Results: each run's curve or a group's), ``group_items``, ``side_legend``, ``plot_message``.
docs/window.md says how a 24 h run redraws."""
