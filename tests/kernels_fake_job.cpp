// A stand-in for a CUDA process under `gpulens run --kernels`, for machines with
// no GPU: it does what the CUDA driver does at cuInit when CUDA_INJECTION64_PATH
// is set (dlopen the library, call InitializeInjection), then prints a line and
// exits with the status given as its argument.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (const char* lib = std::getenv("CUDA_INJECTION64_PATH"); lib != nullptr) {
    if (void* h = dlopen(lib, RTLD_NOW)) {
      using Init = int (*)();
      if (auto init = reinterpret_cast<Init>(dlsym(h, "InitializeInjection"))) init();
    }
  }
  std::printf("fake cuda job output\n");
  return argc > 1 ? std::atoi(argv[1]) : 0;
}
