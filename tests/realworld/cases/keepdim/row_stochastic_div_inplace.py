"""Bug case: Markov transition matrix made row-stochastic with div_.

Source: https://lawwu.github.io/transcripts/transcript_PaCmpygFfXo.html
What goes wrong: `counts.div_(counts.sum(dim=1))` divides column j by row j's total; the square matrix accepts it
silently
The fix: `counts.sum(dim=1, keepdim=True)`
Verified with torch 2.13 on CPU: demo() returns False (the result is wrong, torch raises nothing).
"""
import torch


def transition_matrix(sequences, n_states):
    counts = torch.ones(n_states, n_states)
    for seq in sequences:
        for a, b in zip(seq, seq[1:]):
            counts[a, b] += 1
    counts.div_(counts.sum(dim=1))
    return counts


def demo():
    T = transition_matrix([[0, 1, 2, 1, 0], [2, 2, 1]], 3)
    return torch.allclose(T.sum(1), torch.ones(3))
