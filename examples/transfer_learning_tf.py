# examples/transfer_learning_tf.py — the same program as examples/transfer_learning.lua in TF 2 / Keras 3, for
# comparing epoch times on one machine: run on the image folder the Lua script wrote (its --out DIR/images).
#   /work/venv-tf/bin/python examples/transfer_learning_tf.py DIR/images [--fast] [--weights FILE] [--epochs N]
#       [--fine-tune-epochs N]
# Not run by `make test` (which never runs Python); the figures go in docs/examples.md.
import argparse
import os
import tempfile
import time

import keras
import tensorflow as tf
from keras import layers

p = argparse.ArgumentParser()
p.add_argument("images")
p.add_argument("--fast", action="store_true")
p.add_argument("--weights", default=None)
p.add_argument("--epochs", type=int, default=None)
p.add_argument("--fine-tune-epochs", type=int, default=None)
a = p.parse_args()
FAST = a.fast
EPOCHS = a.epochs or (2 if FAST else 10)
FT_EPOCHS = a.fine_tune_epochs or (1 if FAST else 5)
SIZE = 64 if FAST else 96
BATCH = 16 if FAST else 32
OUT = tempfile.mkdtemp()
keras.utils.set_random_seed(7)

train_ds, val_ds = keras.utils.image_dataset_from_directory(
    a.images, image_size=(SIZE, SIZE), batch_size=BATCH, validation_split=0.2, subset="both", seed=1337)
class_names = train_ds.class_names
AUTOTUNE = tf.data.AUTOTUNE
zoom = layers.RandomZoom(0.1, seed=3)
train_ds = train_ds.map(lambda x, y: (zoom(x, training=True), y), num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)
val_ds = val_ds.prefetch(AUTOTUNE)

data_augmentation = keras.Sequential(
    [layers.RandomFlip("horizontal", seed=1), layers.RandomRotation(0.1, seed=2)], name="data_augmentation")
if FAST:
    base_model = keras.applications.MobileNetV2(input_shape=(SIZE, SIZE, 3), include_top=False, weights=a.weights,
                                                alpha=0.35)
else:
    base_model = keras.applications.ResNet50(input_shape=(SIZE, SIZE, 3), include_top=False, weights=a.weights)
base_model.trainable = False

inputs = keras.Input(shape=(SIZE, SIZE, 3))
x = data_augmentation(inputs)
if FAST:
    x = layers.Rescaling(1 / 127.5, offset=-1)(x)
else:
    x = keras.applications.resnet50.preprocess_input(x)
x = base_model(x, training=False)
x = layers.GlobalAveragePooling2D()(x)
x = layers.Dense(128, activation="relu")(x)
x = layers.Dropout(0.2)(x)
outputs = layers.Dense(len(class_names), activation="softmax")(x)
model = keras.Model(inputs, outputs, name="transfer")


def compile_model(lr):
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=lr),
                  loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])


class Timer(keras.callbacks.Callback):
    def __init__(self, tag):
        super().__init__()
        self.tag = tag

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        print(f"{self.tag} epoch {epoch + 1}: {time.perf_counter() - self.start:.2f} s, loss {logs['loss']:.4f}, "
              f"accuracy {logs['sparse_categorical_accuracy']:.4f}, val_loss {logs['val_loss']:.4f}, "
              f"val_accuracy {logs['val_sparse_categorical_accuracy']:.4f}", flush=True)


def callbacks(tag):
    return [
        keras.callbacks.ModelCheckpoint(os.path.join(OUT, "best_model.h5"), save_best_only=True, monitor="val_loss"),
        keras.callbacks.EarlyStopping(patience=3, restore_best_weights=True),
        keras.callbacks.ReduceLROnPlateau(factor=0.2, patience=2, min_lr=1e-7),
        keras.callbacks.TensorBoard(log_dir=os.path.join(OUT, "logs", tag)),
        Timer(tag),
    ]


compile_model(1e-3)
model.fit(train_ds, validation_data=val_ds, epochs=EPOCHS, callbacks=callbacks("frozen"), verbose=0)
print("validation accuracy after the frozen phase: %.4f" % model.evaluate(val_ds, verbose=0)[1])
base_model.trainable = True
compile_model(1e-5)
model.fit(train_ds, validation_data=val_ds, epochs=FT_EPOCHS, callbacks=callbacks("fine_tune"), verbose=0)
print("test accuracy: %.4f" % model.evaluate(val_ds, verbose=0)[1])
model.save(os.path.join(OUT, "final_model.keras"))
model.export(os.path.join(OUT, "saved_model"))
print("outputs in", OUT)
