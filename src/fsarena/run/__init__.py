"""Running a plan: preflight and launch, the runner and its sequences, faults, resume,
and the power-loss test's command.
"""
