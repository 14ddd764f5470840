"""The cold-start kit: sidelight's own cheap stand-ins for what the prompt hook would otherwise import.

Every prompt of every agent starts a hook process, and that process pays for each module it imports
before it does any work: :mod:`dataclasses`, :mod:`json`, :mod:`re`, :mod:`typing`, :mod:`logging` and
:mod:`pluggy` together cost a cold hook more than a bare interpreter start (the figures, measured, are in
``docs/performance.md``), and the ``redis`` package alone costs more than a whole hook. So the modules on
the hook's path take those names from here instead: :mod:`._record` (records that behave as dataclasses),
:mod:`.jsonio` (json's own C codec without :mod:`json`), :mod:`.patterns` (regular expressions compiled
on first use), :mod:`._typing` (``NamedTuple``, ``Generic``, ``overload``), :mod:`._hookimpl` (pluggy's
mark without pluggy), :mod:`.logs` (loggers that import :mod:`logging` on their first record; also the
package's logging front and the hook's log file) and :mod:`.resp` (the small Redis client a hook reads a
fleet's stream with, in place of ``redis``). Each does what the module it stands in for does (most import
it on first real use; the Redis client never does), and imports nothing of sidelight but this kit
(``tests/support/layers.py``: the ``_fast`` layer sits at the bottom). ``tests/test_hook_imports.py``
guards the kit: it runs the real hook in a process of its own and asserts that the modules the kit stands
in for are not loaded by a prompt, so a new import of one of them on the cold path fails it;
``tests/test_records.py``, ``tests/test_jsonio.py`` and ``tests/test_logs.py`` check that each stand-in
answers as the real one does (``tests/test_fleet.py``: the Redis client as ``redis`` does). This file
imports nothing.
"""
