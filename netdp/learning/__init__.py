"""Decentralized learning for the sgd task: models, training data and learning curves."""
