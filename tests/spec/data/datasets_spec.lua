-- tests/spec/data/datasets_spec.lua — tide.datasets: Fashion-MNIST from
-- Debian's package, TIDE_DATA_DIR, and the error naming package and path.
local tide = require "tide"
local h = require "helpers"
local tmp = require "tmp"
local ffi = require("tide.binding").ffi
pcall(ffi.cdef, "int setenv(const char *, const char *, int); int unsetenv(const char *);")

describe("tide.datasets", function()
  it("loads Fashion-MNIST as Keras does", function()
    local train, test = tide.datasets.fashion_mnist.load_data()
    assert.are.same({ 60000, 28, 28 }, train[1].shape:as_list())
    assert.are.equal("uint8", train[1].dtype)
    assert.are.same({ 60000 }, train[2].shape:as_list())
    assert.are.same({ 10000, 28, 28 }, test[1].shape:as_list())
    assert.are.equal(9, test[2][0]:item()) -- the first test image is an ankle boot
  end)

  it("reads TIDE_DATA_DIR first, and names the package and path when files are missing", function()
    local dir = tmp.dir("datasets")
    os.execute("mkdir -p " .. dir .. "/mnist")
    ffi.C.setenv("TIDE_DATA_DIR", dir, 1)
    local ok, err = pcall(tide.datasets.mnist.load_data)
    assert.is_false(ok)
    assert.is_truthy(tostring(err):find("train-images-idx3-ubyte.gz", 1, true) or
      tostring(err):find("t10k", 1, true))
    assert.is_truthy(tostring(err):find("TIDE_DATA_DIR", 1, true))
    for _, name in ipairs { "train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
      "t10k-labels-idx1-ubyte" } do
      os.execute(string.format("cp /usr/share/datasets/fashion-mnist/%s.gz %s/mnist/", name, dir))
    end
    local train = tide.datasets.mnist.load_data()
    assert.are.same({ 60000, 28, 28 }, train[1].shape:as_list())
    ffi.C.unsetenv("TIDE_DATA_DIR")
    tmp.remove(dir)
    h.errors("mnist", tide.datasets.mnist.load_data)
  end)
end)
