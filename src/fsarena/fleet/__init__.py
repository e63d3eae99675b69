"""The fleet: one comparison on many hosts through Ansible, and the merge of their sessions.

fleet.merge checks that sessions may be merged and computes the per-host ratios;
fleet.render says the fleet report as the report's blocks (every document format
lays them out) or exports its cells as CSV and JSON; fleet.run drives ansible-runner with the
playbook shipped in fleet/playbook.yml. Heavy libraries (ansible_runner) are
imported only by `fsarena fleet run`.
"""
