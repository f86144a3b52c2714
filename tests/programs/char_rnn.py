# ruff: noqa - written as the tutorial writes it (super(Net, self), str.format, ...)
# The NLP tutorial "Classifying Names with a Character-Level RNN": names one-hot encoded
# letter by letter, an nn.RNN reads them and a Linear + LogSoftmax picks the language.
# The tutorial downloads a names dataset; here a few names per language are given inline.
import random
import string
import unicodedata

import torch
import torch.nn as nn

allowed_characters = string.ascii_letters + " .,;'" + "_"
n_letters = len(allowed_characters)


def unicodeToAscii(s):
    """Strip accents and keep only allowed characters."""
    return "".join(
        c for c in unicodedata.normalize("NFD", s)
        if unicodedata.category(c) != "Mn" and c in allowed_characters
    )


def letterToIndex(letter):
    """The index of a letter; "_" stands for a character outside the alphabet."""
    if letter not in allowed_characters:
        return allowed_characters.find("_")
    return allowed_characters.find(letter)


def lineToTensor(line):
    """A name as a <line_length x 1 x n_letters> tensor of one-hot letter vectors."""
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(unicodeToAscii("Ślusàrski"))
print(lineToTensor("Jones").size())

names = {
    "English": ["Smith", "Jones", "Taylor", "Brown", "Wilson", "Walker"],
    "French": ["Dubois", "Lefevre", "Moreau", "Laurent", "Girard", "Bonnet"],
    "Italian": ["Rossi", "Bianchi", "Romano", "Ricci", "Marino", "Greco"],
    "Japanese": ["Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito"],
}
labels_uniq = list(names)
data = [(unicodeToAscii(n), label) for label, group in names.items() for n in group]


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(CharRNN, self).__init__()

        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        output = self.softmax(output)

        return output


torch.manual_seed(0)
random.seed(0)
n_hidden = 32
rnn = CharRNN(n_letters, n_hidden, len(labels_uniq))
print(rnn)


def label_from_output(output, output_labels):
    top_n, top_i = output.topk(1)
    label_i = top_i[0].item()
    return output_labels[label_i], label_i


input = lineToTensor("Albert")
output = rnn(input)
print(output)
print(label_from_output(output, labels_uniq))


def train(rnn, training_data, n_epoch=10, n_batch_size=4, report_every=2, learning_rate=0.2,
          criterion=nn.NLLLoss()):
    """Minibatches of names, one name at a time through the RNN, the losses summed."""
    current_loss = 0
    all_losses = []
    rnn.train()
    optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)

    for iter in range(1, n_epoch + 1):
        rnn.zero_grad()  # clear the gradients

        # Shuffle the examples and cut them into minibatches.
        batches = list(range(len(training_data)))
        random.shuffle(batches)
        batches = [batches[i:i + n_batch_size] for i in range(0, len(batches), n_batch_size)]

        for batch in batches:
            batch_loss = 0
            for i in batch:
                name, label = training_data[i]
                label_tensor = torch.tensor([labels_uniq.index(label)], dtype=torch.long)
                output = rnn(lineToTensor(name))
                loss = criterion(output, label_tensor)
                batch_loss += loss

            # Optimize parameters
            batch_loss.backward()
            nn.utils.clip_grad_norm_(rnn.parameters(), 3)
            optimizer.step()
            optimizer.zero_grad()

            current_loss += batch_loss.item() / len(batch)

        all_losses.append(current_loss / len(batches))
        if iter % report_every == 0:
            print(f"{iter} ({iter / n_epoch:.0%}): \t average batch loss = {all_losses[-1]}")
        current_loss = 0

    return all_losses


all_losses = train(rnn, data)
print(all_losses)

rnn.eval()
with torch.no_grad():
    for name in ["Smith", "Rossi", "Tanaka", "Girard"]:
        output = rnn(lineToTensor(name))
        guess, guess_i = label_from_output(output, labels_uniq)
        print(name, guess, guess_i, output)
