// Package clock is the time source every Sluice component takes instead of calling the time
// package directly, so that tests can drive time by hand and never sleep to wait for a state.
//
// Production code receives Real(); tests build a Fake with NewFake, hand it to the component
// under test and move it forward with Advance. Timers on a Fake fire synchronously inside
// Advance, in deadline order, so a test knows exactly which deadlines have passed.
package clock
