"""Adversaries: users and holders who do not follow the protocol.

:mod:`netdp.adversary.poisoning` holds the poisoning attacks on LDP frequency collection
(Cao, Jia and Gong, USENIX Security 2021; spec mechanisms.md, "Poisoning").
"""
