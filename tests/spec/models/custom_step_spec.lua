-- tests/spec/models/custom_step_spec.lua — subclassed models that override
-- train_step (and test_step) and define no call, as keras.io's VAE and GAN
-- examples do (small sizes): fit trains them, and metrics kept in the
-- model's fields are model.metrics, reset at each epoch as Keras 3 does
-- (History against tests/fixtures/keras/examples.lua, from examples_gen.py).
local tide = require "tide"
local h = require "helpers"
local L = tide.layers
local F = dofile("tests/fixtures/keras/examples.lua")

local function names(list)
  local out = {}
  for i, m in ipairs(list) do out[i] = m.name end
  return out
end

local function sorted_keys(t)
  local out = {}
  for k in pairs(t) do out[#out + 1] = k end
  table.sort(out)
  return out
end

describe("a subclassed model with its own train_step and no call", function()
  before_each(function() L.clear_session() end)

  -- keras.io's "Variational AutoEncoder", at 8x8 images with a 2-d latent space.
  it("keras.io's VAE: fit trains it, its three trackers are model.metrics and History's keys", function()
    tide.random.set_seed(7) -- its data, weights and sampling: three epochs of a VAE on noise need not all improve
    local Sampling = L.Layer:extend("Sampling")
    function Sampling:call(inputs)
      local z_mean, z_log_var = inputs[1], inputs[2]
      local eps = tide.random.normal(tide.shape(z_mean))
      return z_mean + tide.exp(z_log_var * 0.5) * eps
    end
    local latent_dim = 2
    local enc_in = tide.Input { shape = { 8, 8, 1 } }
    local x = L.Conv2D { 4, 3, activation = "relu", strides = 2, padding = "same" }(enc_in)
    x = L.Flatten {}(x)
    x = L.Dense { 8, activation = "relu" }(x)
    local z_mean = L.Dense { latent_dim, name = "z_mean" }(x)
    local z_log_var = L.Dense { latent_dim, name = "z_log_var" }(x)
    local z = Sampling {} { z_mean, z_log_var }
    local encoder = tide.Model { inputs = enc_in, outputs = { z_mean, z_log_var, z }, name = "encoder" }
    local dec_in = tide.Input { shape = { latent_dim } }
    local y = L.Dense { 4 * 4 * 4, activation = "relu" }(dec_in)
    y = L.Reshape { { 4, 4, 4 } }(y)
    y = L.Conv2DTranspose { 4, 3, activation = "relu", strides = 2, padding = "same" }(y)
    local dec_out = L.Conv2DTranspose { 1, 3, activation = "sigmoid", padding = "same" }(y)
    local decoder = tide.Model { inputs = dec_in, outputs = dec_out, name = "decoder" }

    local VAE = tide.Model:extend("VAE")
    function VAE:init(enc, dec)
      self.encoder, self.decoder = enc, dec
      self.total_loss_tracker = tide.metrics.Mean { name = "total_loss" }
      self.reconstruction_loss_tracker = tide.metrics.Mean { name = "reconstruction_loss" }
      self.kl_loss_tracker = tide.metrics.Mean { name = "kl_loss" }
    end
    function VAE:train_step(data)
      local images = data[1]
      local tape = tide.GradientTape()
      local total, rec, kl = tape:run(function()
        local zm, zlv, zz = unpack(self.encoder(images))
        local reconstruction = self.decoder(zz)
        local r = tide.reduce_mean(tide.reduce_sum(tide.losses.binary_crossentropy(images, reconstruction), { 1, 2 }))
        local k = (1 + zlv - tide.square(zm) - tide.exp(zlv)) * -0.5
        k = tide.reduce_mean(tide.reduce_sum(k, 1))
        return r + k, r, k
      end)
      local vars = self.trainable_weights
      self.optimizer:apply(tape:gradient(total, vars), vars)
      self.total_loss_tracker:update_state(total)
      self.reconstruction_loss_tracker:update_state(rec)
      self.kl_loss_tracker:update_state(kl)
      return { loss = self.total_loss_tracker:result(), reconstruction_loss = self.reconstruction_loss_tracker:result(),
               kl_loss = self.kl_loss_tracker:result() }
    end

    local vae = VAE(encoder, decoder)
    vae:compile { optimizer = tide.optimizers.Adam { learning_rate = 1e-2 } }
    assert.are.same({ "loss", "total_loss", "reconstruction_loss", "kl_loss" }, names(vae.metrics))
    local images = tide.cast(tide.random.uniform { 64, 8, 8, 1 }:gt(0.5), "float32")
    local before = vae.encoder.trainable_weights[1]:read_value()
    local hist = vae:fit(images, nil, { epochs = 3, batch_size = 16, verbose = 0 })
    assert.are.same({ "kl_loss", "loss", "reconstruction_loss" }, sorted_keys(hist.history))
    assert.are.equal(3, #hist.history.loss)
    assert.is_true(hist.history.loss[3] < hist.history.loss[1])
    for e = 1, 3 do -- each epoch's values are that epoch's means: total = reconstruction + kl
      h.close(hist.history.loss[e], hist.history.reconstruction_loss[e] + hist.history.kl_loss[e], 1e-4)
    end
    assert.are.equal(12, vae.optimizer.iterations:item())
    assert.is_true(tide.reduce_max(tide.abs(before - vae.encoder.trainable_weights[1])):item() > 0)
  end)

  -- keras.io's "Customizing what happens in fit(): GAN", at 4x4 images.
  it("keras.io's GAN: its own compile with two optimizers, metrics made in compile, two tapes a step", function()
    local latent_dim = 3
    local discriminator = tide.Sequential { tide.Input { shape = { 4, 4, 1 } },
      L.Conv2D { 4, 3, strides = 2, padding = "same" }, L.Activation { "leaky_relu" },
      L.GlobalMaxPooling2D {}, L.Dense { 1 } }
    local generator = tide.Sequential { tide.Input { shape = { latent_dim } },
      L.Dense { 2 * 2 * 4 }, L.Activation { "leaky_relu" }, L.Reshape { { 2, 2, 4 } },
      L.Conv2DTranspose { 4, 3, strides = 2, padding = "same" }, L.Activation { "leaky_relu" },
      L.Conv2D { 1, 3, padding = "same", activation = "sigmoid" } }

    local GAN = tide.Model:extend("GAN")
    function GAN:init(d, g, dim)
      self.discriminator, self.generator, self.latent_dim = d, g, dim
    end
    function GAN:compile(opts)
      tide.Model.compile(self)
      self.d_optimizer, self.g_optimizer, self.loss_fn = opts.d_optimizer, opts.g_optimizer, opts.loss_fn
      self.d_loss_metric = tide.metrics.Mean { name = "d_loss" }
      self.g_loss_metric = tide.metrics.Mean { name = "g_loss" }
    end
    function GAN:train_step(data)
      local real = data[1]
      local batch = tide.shape(real)[0]
      local latent = tide.random.normal(tide.stack { batch, self.latent_dim })
      local fake = self.generator(latent)
      local combined = tide.concat({ fake, real }, 0)
      local labels = tide.concat({ tide.ones(tide.stack { batch, 1 }), tide.zeros(tide.stack { batch, 1 }) }, 0)
      labels = labels + tide.random.uniform(tide.shape(labels)) * 0.05
      local dvars = self.discriminator.trainable_weights
      local tape = tide.GradientTape()
      local d_loss = tape:run(function() return self.loss_fn(labels, self.discriminator(combined)) end)
      self.d_optimizer:apply(tape:gradient(d_loss, dvars), dvars)
      local misleading = tide.zeros(tide.stack { batch, 1 })
      local gvars = self.generator.trainable_weights
      local tape2 = tide.GradientTape()
      local g_loss = tape2:run(function()
        return self.loss_fn(misleading, self.discriminator(self.generator(tide.random.normal(tide.stack {
          batch, self.latent_dim }))))
      end)
      self.g_optimizer:apply(tape2:gradient(g_loss, gvars), gvars)
      self.d_loss_metric:update_state(d_loss)
      self.g_loss_metric:update_state(g_loss)
      return { d_loss = self.d_loss_metric:result(), g_loss = self.g_loss_metric:result() }
    end

    local gan = GAN(discriminator, generator, latent_dim)
    local d_opt, g_opt = tide.optimizers.Adam { learning_rate = 3e-3 }, tide.optimizers.Adam { learning_rate = 3e-3 }
    gan:compile { d_optimizer = d_opt, g_optimizer = g_opt,
                  loss_fn = tide.losses.BinaryCrossentropy { from_logits = true } }
    assert.are.same({ "loss", "d_loss", "g_loss" }, names(gan.metrics))
    local real = tide.random.uniform { 32, 4, 4, 1 }
    local hist = gan:fit(real, nil, { epochs = 2, batch_size = 8, verbose = 0 })
    assert.are.same({ "d_loss", "g_loss" }, sorted_keys(hist.history))
    assert.are.equal(2, #hist.history.d_loss)
    assert.are.equal(8, d_opt.iterations:item())
    assert.are.equal(8, g_opt.iterations:item())
    -- compile's own optimizer is never applied, so it was not built either (as Keras)
    assert.are.equal(2, #gan.optimizer.variables) -- iterations and the learning rate, no slots
  end)

  it("model.metrics finds the metrics of its layers' fields too (not of a model below: it trains apart)", function()
    local Probe = L.Layer:extend("Probe")
    function Probe:init() self.seen = { tide.metrics.Sum { name = "rows_seen" } } end
    function Probe:call(x)
      self.seen[1]:update_state(tide.reduce_sum(x, 1) * 0 + 1) -- one per row
      return x
    end
    local inner = tide.Sequential { tide.Input { shape = { 2 } }, L.Dense { 1 } }
    inner:compile { optimizer = "sgd", loss = "mse" }
    local Net = tide.Model:extend("Net")
    function Net:init()
      self.probe = Probe {}
      self.head = inner
      self.mean_out = tide.metrics.Mean { name = "mean_out" }
    end
    function Net:call(x)
      local y = self.head(self.probe(x))
      self.mean_out:update_state(y)
      return y
    end
    local m = Net()
    m:compile { optimizer = "sgd", loss = "mse" }
    assert.are.same({ "loss", "mean_out", "rows_seen" }, names(m.metrics))
    local hist = m:fit(tide.ones { 6, 2 }, tide.zeros { 6, 1 }, { epochs = 2, batch_size = 3, verbose = 0 })
    assert.are.same({ 6, 6 }, hist.history.rows_seen) -- reset at each epoch
  end)

  it("metrics in fields are reset at each epoch; History matches Keras 3's", function()
    local Lin = tide.Model:extend("Lin")
    function Lin:init()
      self.d = L.Dense { 1, kernel_initializer = "ones" }
      self.total_loss_tracker = tide.metrics.Mean { name = "total_loss" }
    end
    function Lin:train_step(data)
      local x, y = data[1], data[2]
      local tape = tide.GradientTape()
      local loss = tape:run(function() return tide.reduce_mean(tide.square(self.d(x) - y)) end)
      local vars = self.trainable_weights
      self.optimizer:apply(tape:gradient(loss, vars), vars)
      self.total_loss_tracker:update_state(loss)
      return { loss = self.total_loss_tracker:result() }
    end
    function Lin:test_step(data)
      local loss = tide.reduce_mean(tide.square(self.d(data[1]) - data[2]))
      self.total_loss_tracker:update_state(loss)
      return { loss = self.total_loss_tracker:result() }
    end
    local m = Lin()
    m:compile { optimizer = tide.optimizers.SGD { learning_rate = 0.1 } }
    local x, y = tide.tensor(F.field_metrics.x, "float32"), tide.tensor(F.field_metrics.y, "float32")
    local hist = m:fit(x, y, { epochs = 2, batch_size = 4, shuffle = false, verbose = 0 })
    h.close(hist.history.loss, F.field_metrics.history.loss, 1e-5)
    assert.are.same(F.field_metrics.metrics_names, names(m.metrics))
    h.close(m:evaluate(x, y, { batch_size = 4, verbose = 0 }), F.field_metrics.evaluate, 1e-5)
  end)
end)
