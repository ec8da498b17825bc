// cuda_graph_signature.cuh: shipped by the `cuda-build` crate, written to OUT_DIR and included
// by the wrapper translation unit cuda-build generates for each kernels/*.cu. For each
// `extern "C" __global__` kernel the wrapper defines a host function
//     extern "C" const char* <kernel>__cuda_graph_signature(void);
// returning the kernel's parameter types in canonical, Rust-flavoured spelling, separated by
// ", ": integers by size and signedness whatever the typedef (i8 u8 i16 u16 i32 u32 i64 u64
// i128 u128), bool, f32, f64, pointers as `*mut T` / `*const T` (nested), `c_void` for void,
// arrays as `[T; N]`, `cuda_graph::slice<T>` as `cuda_graph::slice<*mut T>` (`<*const T>`
// for `slice<const T>`), and classes, structs and enums by their C++ qualified name.
// `volatile` is dropped (it changes no layout and no permission). `cuda_graph::kernels!`
// declares the function next to the kernel and compares the list with its Rust declaration.
#pragma once

#ifndef __CUDA_ARCH__

#include <cstddef>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <cxxabi.h>

namespace cuda_graph {
template <class T>
struct slice;
}  // namespace cuda_graph

namespace cuda_graph_signature {

template <class T>
struct slice_element {
    static constexpr bool is_slice = false;
};

template <class T>
struct slice_element<cuda_graph::slice<T>> {
    static constexpr bool is_slice = true;
    using type = T;
};

// The demangled name of a type's `std::type_info`.
inline std::string demangle(const char* mangled) {
    int status = 0;
    char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    if (status != 0 || name == nullptr) {
        return std::string(mangled);
    }
    std::string result(name);
    std::free(name);
    return result;
}

// The qualified name of a class, struct, union or enum, also of one only declared (like
// `CUgraphExec_st`): `typeid` of an incomplete class is ill-formed, of a pointer to it is not,
// so the name is read from `T*` without its `*`. Anything else the rules leave: its typeid.
template <class T>
std::string demangled() {
    if constexpr (std::is_class_v<T> || std::is_union_v<T> || std::is_enum_v<T>) {
        std::string name = demangle(typeid(T*).name());
        if (!name.empty() && name.back() == '*') {
            name.pop_back();
        }
        return name;
    } else {
        return demangle(typeid(T).name());
    }
}

template <class T>
std::string canonical() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_pointer_v<U>) {
        using Pointee = std::remove_pointer_t<U>;
        return std::string(std::is_const_v<Pointee> ? "*const " : "*mut ") + canonical<Pointee>();
    } else if constexpr (std::is_same_v<U, bool>) {
        return "bool";
    } else if constexpr (std::is_same_v<U, __int128>) {
        return "i128";
    } else if constexpr (std::is_same_v<U, unsigned __int128>) {
        return "u128";
    } else if constexpr (std::is_integral_v<U>) {
        return std::string(std::is_signed_v<U> ? "i" : "u") + std::to_string(sizeof(U) * 8);
    } else if constexpr (std::is_void_v<U>) {
        return "c_void";
    } else if constexpr (std::is_same_v<U, float>) {
        return "f32";
    } else if constexpr (std::is_same_v<U, double>) {
        return "f64";
    } else if constexpr (slice_element<U>::is_slice) {
        // `cuda_graph::slice<T>` (cuda_graph.cuh) names its element as a pointer would.
        return "cuda_graph::slice<" + canonical<typename slice_element<U>::type*>() + ">";
    } else if constexpr (std::is_array_v<U> && std::extent_v<U> != 0) {
        return "[" + canonical<std::remove_extent_t<U>>() + "; " + std::to_string(std::extent_v<U>) + "]";
    } else {
        return demangled<U>();
    }
}

template <class F>
struct parameters;

template <class R, class... Args>
struct parameters<R (*)(Args...)> {
    static std::string list() {
        std::string out;
        bool first = true;
        ((out += (first ? "" : ", "), out += canonical<Args>(), first = false), ...);
        return out;
    }
};

}  // namespace cuda_graph_signature

// Defines `extern "C" const char* <kernel>__cuda_graph_signature(void)` for the kernel `name`
// (declared above this line). The string is built once and lives to the end of the program.
#define CUDA_GRAPH_SIGNATURE(name)                                                               \
    extern "C" const char* name##__cuda_graph_signature(void) noexcept {                         \
        static const std::string signature = cuda_graph_signature::parameters<decltype(&name)>::list(); \
        return signature.c_str();                                                                \
    }

#endif  // __CUDA_ARCH__
