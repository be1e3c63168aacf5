package z85_test

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/z85"
)

// The test vector of ZeroMQ RFC 32: eight bytes are ten characters.
func Example() {
	text, err := z85.Encode([]byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B})
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	raw, err := z85.Decode(text)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% X\n", raw)
	// Output:
	// HelloWorld
	// 86 4F D2 6F B5 59 F7 5B
}

// Z85 has no padding: a length that is not whole groups is refused.
func ExampleEncode_length() {
	_, err := z85.Encode([]byte("abc"))
	fmt.Println(err)
	// Output:
	// z85: invalid length: 3 bytes is not a multiple of 4
}
