// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {IERC20} from "@openzeppelin/contracts/interfaces/IERC20.sol";
import {ERC7984} from "@openzeppelin/confidential-contracts/token/ERC7984/ERC7984.sol";
import {ERC7984ERC20Wrapper} from "@openzeppelin/confidential-contracts/token/ERC7984/extensions/ERC7984ERC20Wrapper.sol";
import {ZamaEthereumConfig} from "@fhevm/solidity/config/ZamaConfig.sol";

/**
 * @title ConfidentialStable (cSTABLE)
 * @notice OpenZeppelin's ERC-7984 wrapper over the public stablecoin: `wrap` mints, `confidentialTransfer` moves an
 *         encrypted amount, `unwrap` + `finalizeUnwrap` redeem. `ZamaEthereumConfig` picks the fhEVM host contracts
 *         of the chain it runs on (Ethereum mainnet, Sepolia, or 31337 for the embedded mock).
 */
contract ConfidentialStable is ZamaEthereumConfig, ERC7984ERC20Wrapper {
    constructor(IERC20 underlying_)
        ERC7984("Confidential Sealpay Stable", "cSTABLE", "")
        ERC7984ERC20Wrapper(underlying_)
    {}
}
