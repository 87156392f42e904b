"""One module per network family (what SB3 builds for a policy), and ``registry.FAMILIES``: the family each
algorithm's spec names, with the shape it counts.

``family`` (the ``Family`` each answers as), ``actor_critic``, ``trpo``, ``maskable_ppo``, ``recurrent``,
``off_policy`` (actor and Q critics), ``sac``, ``tqc``, ``crossq``, ``td3``, ``q_network``, ``qr_network``, ``ars``."""
