// SPDX-License-Identifier: MIT
pragma solidity ^0.8.27;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/**
 * @title TestStablecoin
 * @notice The public stablecoin of sandbox networks: a plain ERC-20 with 6 decimals that the service operator
 *         (its owner) mints for the faucet. `cSTABLE` (ConfidentialStable) wraps it 1:1.
 */
contract TestStablecoin is ERC20, Ownable {
    constructor(address initialOwner) ERC20("Sealpay Test Stable", "STABLE") Ownable(initialOwner) {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Faucet mint, operator only.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
