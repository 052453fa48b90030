"""What a test run says, as data: the kinds of failure (``kinds``), the one model
every reader builds (``model``), the plugin that writes it (``channel``) and the
teaching verdicts that fill it (``verdicts``)."""
