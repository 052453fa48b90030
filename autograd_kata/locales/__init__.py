"""The message catalogues: one gettext ``.po`` file per language (see ``autograd_kata.core.i18n``)."""
